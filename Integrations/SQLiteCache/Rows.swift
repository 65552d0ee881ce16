import Core
import Foundation

/// A `posts` row: the post's own columns, times in milliseconds since 1970 (UTC).
struct PostRow {
    var id: String
    var authorID: String
    var text: String
    var createdAt: Int64
    var editedAt: Int64?
    var replyTo: String?
    var replyCount: Int64
    var repostCount: Int64
    var likeCount: Int64
    /// The post's video ids as a JSON array, so other tools can use `json_each`.
    var videoIDs: String

    init(_ post: Post) {
        id = post.id.rawValue
        authorID = post.author.id.rawValue
        text = post.text
        createdAt = millisecondsSince1970(post.createdAt)
        editedAt = post.editedAt.map(millisecondsSince1970)
        replyTo = post.replyTo?.rawValue
        replyCount = Int64(post.counts.replies)
        repostCount = Int64(post.counts.reposts)
        likeCount = Int64(post.counts.likes)
        videoIDs = JSONStringArray.encode(post.videoIDs.map(\.rawValue))
    }

    init(id: String, authorID: String, text: String, createdAt: Int64, editedAt: Int64?, replyTo: String?,
         replyCount: Int64, repostCount: Int64, likeCount: Int64, videoIDs: String) {
        self.id = id
        self.authorID = authorID
        self.text = text
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.replyTo = replyTo
        self.replyCount = replyCount
        self.repostCount = repostCount
        self.likeCount = likeCount
        self.videoIDs = videoIDs
    }

    /// The row's values in column order, after `feed`: id, author_id, text, created_at,
    /// edited_at, reply_to, reply/repost/like counts, video_ids.
    func bindings(feed: String) -> [SQLiteValue] {
        [.text(feed), .text(id), .text(authorID), .text(text), .integer(createdAt), .integer(editedAt),
         .text(replyTo), .integer(replyCount), .integer(repostCount), .integer(likeCount), .text(videoIDs)]
    }
}

/// A `users` row.
struct UserRow {
    var id: String
    var handle: String
    var displayName: String
    var avatarURL: String?

    init(_ user: User) {
        id = user.id.rawValue
        handle = user.handle
        displayName = user.displayName
        avatarURL = user.avatarURL?.absoluteString
    }

    /// The row's values in column order: feed, id, handle, display_name, avatar_url.
    func bindings(feed: String) -> [SQLiteValue] {
        [.text(feed), .text(id), .text(handle), .text(displayName), .text(avatarURL)]
    }

    init(id: String, handle: String, displayName: String, avatarURL: String?) {
        self.id = id
        self.handle = handle
        self.displayName = displayName
        self.avatarURL = avatarURL
    }
}

/// A resolved `videos` row.
struct VideoRow {
    var id: String
    var title: String
    var durationMs: Int64
    var streamURL: String
    var thumbnailURL: String?
    var sizeBytes: Int64?

    init(_ video: Video) {
        id = video.id.rawValue
        title = video.title
        durationMs = Int64((video.duration * 1000).rounded())
        streamURL = video.streamURL.absoluteString
        thumbnailURL = video.thumbnailURL?.absoluteString
        sizeBytes = video.sizeBytes
    }

    init(id: String, title: String, durationMs: Int64, streamURL: String, thumbnailURL: String?, sizeBytes: Int64?) {
        self.id = id
        self.title = title
        self.durationMs = durationMs
        self.streamURL = streamURL
        self.thumbnailURL = thumbnailURL
        self.sizeBytes = sizeBytes
    }
}

extension User {
    init(_ row: UserRow) {
        self.init(id: UserID(row.id), handle: row.handle, displayName: row.displayName,
                  avatarURL: row.avatarURL.flatMap(URL.init(string:)))
    }
}

extension Post {
    init(_ row: PostRow, author: User) {
        self.init(id: PostID(row.id), author: author, text: row.text, createdAt: Date(milliseconds: row.createdAt),
                  editedAt: row.editedAt.map(Date.init(milliseconds:)), replyTo: row.replyTo.map { PostID($0) },
                  counts: Counts(replies: Int(row.replyCount), reposts: Int(row.repostCount), likes: Int(row.likeCount)),
                  videoIDs: JSONStringArray.decode(row.videoIDs).map { VideoID($0) })
    }
}

extension Video {
    /// Fails for a row whose stream URL no longer parses (written by another tool, say).
    init?(_ row: VideoRow) {
        guard let stream = URL(string: row.streamURL) else { return nil }
        self.init(id: VideoID(row.id), title: row.title, duration: Double(row.durationMs) / 1000, streamURL: stream,
                  thumbnailURL: row.thumbnailURL.flatMap(URL.init(string:)), sizeBytes: row.sizeBytes)
    }
}

/// Times are stored as whole milliseconds since 1970 so that equal times compare equal in SQL.
func millisecondsSince1970(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

extension Date {
    init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

/// The JSON array of strings kept in `posts.video_ids`.
enum JSONStringArray {
    static func encode(_ strings: [String]) -> String {
        var json = "["
        for (index, string) in strings.enumerated() {
            if index > 0 { json += "," }
            json += "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": json += "\\\""
                case "\\": json += "\\\\"
                case _ where scalar.value < 0x20: json += String(format: "\\u%04x", scalar.value)
                default: json.unicodeScalars.append(scalar)
                }
            }
            json += "\""
        }
        return json + "]"
    }

    static func decode(_ json: String) -> [String] {
        (try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []
    }
}
