import Core
import Foundation

/// A post as one element of a page's JSON parameter, named for the `posts` columns.
struct PostgresPostRow: Codable {
    var id: String
    var author_id: String
    var text: String
    var created_at: Int64
    var edited_at: Int64?
    var reply_to: String?
    var reply_count: Int64
    var repost_count: Int64
    var like_count: Int64
    var video_ids: String
    var html: String?
    var content_warning: String?
    var language: String?
    var visibility: String?
    var repost_by: String?
    var repost_of: String?
    var attachments: String
    var title: String?
    var url: String?
    var quote_of: String?
    var quote_count: Int64
    var labels: String
    var repost_at: Int64?

    init(_ post: Post) {
        id = post.id.rawValue
        author_id = post.author.id.rawValue
        text = post.text
        created_at = milliseconds(post.createdAt)
        edited_at = post.editedAt.map(milliseconds)
        reply_to = post.replyTo?.rawValue
        reply_count = Int64(post.counts.replies)
        repost_count = Int64(post.counts.reposts)
        like_count = Int64(post.counts.likes)
        video_ids = jsonText(post.videoIDs.map(\.rawValue))
        html = post.html
        content_warning = post.contentWarning
        language = post.language
        visibility = post.visibility?.rawValue
        repost_by = post.repost?.by.id.rawValue
        repost_of = post.repost?.originalID.rawValue
        attachments = post.attachments.isEmpty ? "[]" : jsonText(post.attachments.map(PostgresAttachment.init))
        title = post.title
        url = post.url?.absoluteString
        quote_of = post.quoteOf?.rawValue
        quote_count = Int64(post.counts.quotes)
        labels = jsonText(post.labels)
        repost_at = post.repost?.at.map(milliseconds)
    }
}

/// An author with the time of the newest post on the page that carried the profile.
struct PostgresUserRow: Codable {
    var id: String
    var handle: String
    var display_name: String
    var avatar_url: String?
    var profile_at: Int64
}

/// A resolved video, named for the `videos` columns.
struct PostgresVideoRow: Codable {
    var id: String
    var title: String
    var duration_ms: Int64
    var stream_url: String
    var thumbnail_url: String?
    var size_bytes: Int64?
    var width: Int64?
    var height: Int64?
    var fps: Double?

    init(_ video: Video) {
        id = video.id.rawValue
        title = video.title
        duration_ms = Int64(exactly: (video.duration * 1000).rounded()) ?? 0
        stream_url = video.streamURL.absoluteString
        thumbnail_url = video.thumbnailURL?.absoluteString
        size_bytes = video.sizeBytes
        width = video.width.map(Int64.init)
        height = video.height.map(Int64.init)
        fps = video.framesPerSecond
    }
}

/// An attachment as the `attachments` column holds it (the same JSON as the SQLite store's).
struct PostgresAttachment: Codable {
    var kind: String
    var url: String
    var preview_url: String?
    var description: String?
    var title: String?
    var mime_type: String?
    var size_bytes: Int64?
    var width: Int?
    var height: Int?

    init(_ attachment: Post.Attachment) {
        kind = attachment.kind
        url = attachment.url.absoluteString
        preview_url = attachment.previewURL?.absoluteString
        description = attachment.description
        title = attachment.title
        mime_type = attachment.mimeType
        size_bytes = attachment.sizeBytes
        width = attachment.width
        height = attachment.height
    }

    var attachment: Post.Attachment? {
        URL(string: url).map { Post.Attachment(kind: kind, url: $0, previewURL: preview_url.flatMap(URL.init(string:)),
                                               description: description, title: title, mimeType: mime_type,
                                               sizeBytes: size_bytes, width: width, height: height) }
    }
}

func milliseconds(_ date: Date) -> Int64 {
    let value = (date.timeIntervalSince1970 * 1000).rounded()
    guard value.isFinite else { return value > 0 ? .max : .min }
    return Int64(exactly: value) ?? (value > 0 ? .max : .min)
}

extension Date {
    init(pgMilliseconds text: String?) { self.init(timeIntervalSince1970: Double(Int64(text ?? "") ?? 0) / 1000) }
}

/// Compact JSON with sorted keys, as the SQLite store writes it.
func jsonText<T: Encodable>(_ value: T) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
}

func decodeJSON<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
    guard let text else { return nil }
    return try? JSONDecoder().decode(type, from: Data(text.utf8))
}
