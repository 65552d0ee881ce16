import Core

/// A page's changes as rows ready to bind: every post's columns, each author once, the
/// video ids to keep placeholders for, in one ``RowBuffer``.
struct PageRows {
    /// Values per post row: id, author_id, text, created_at, edited_at, reply_to, reply/repost/
    /// like counts, video_ids, html, content_warning, language, visibility, repost_by, repost_of,
    /// attachments. With `feed` as parameter 1 they are parameters 2…18 of the post statements.
    static let postWidth = 17
    /// Values per user row: id, handle, display_name, avatar_url (parameters 2…5).
    static let userWidth = 4

    enum Step {
        /// Upsert the post whose values start at this index.
        case upsert(Int)
        /// Delete the post whose id is the value at this index.
        case delete(Int)
    }

    private(set) var buffer: RowBuffer
    /// The page's changes in order, so an upsert and a delete of one id keep their order.
    private(set) var steps: [Step] = []
    /// Where each distinct author's row starts.
    private(set) var users: [Int] = []
    /// Where each distinct referenced video id is.
    private(set) var videoIDs: [Int] = []

    init(_ changes: [FeedChange]) {
        buffer = RowBuffer(reservingValues: changes.count * (Self.postWidth + 2), bytes: changes.count * 512)
        steps.reserveCapacity(changes.count)
        var seenUsers = Set<UserID>()
        var seenVideos = Set<VideoID>()
        for change in changes {
            switch change {
            case .upsert(let post):
                steps.append(.upsert(buffer.end))
                appendPost(post)
                if seenUsers.insert(post.author.id).inserted { appendUser(post.author) }
                if let booster = post.repost?.by, seenUsers.insert(booster.id).inserted { appendUser(booster) }
                for id in post.videoIDs where seenVideos.insert(id).inserted {
                    videoIDs.append(buffer.end)
                    buffer.append(id.rawValue)
                }
            case .delete(let id):
                steps.append(.delete(buffer.end))
                buffer.append(id.rawValue)
            }
        }
    }

    private mutating func appendPost(_ post: Post) {
        buffer.append(post.id.rawValue)
        buffer.append(post.author.id.rawValue)
        buffer.append(post.text)
        buffer.append(millisecondsSince1970(post.createdAt))
        buffer.append(post.editedAt.map(millisecondsSince1970))
        buffer.append(post.replyTo?.rawValue)
        buffer.append(Int64(post.counts.replies))
        buffer.append(Int64(post.counts.reposts))
        buffer.append(Int64(post.counts.likes))
        buffer.append(post.videoIDs.isEmpty ? "[]" : JSONStringArray.encode(post.videoIDs.map(\.rawValue)))
        buffer.append(post.html)
        buffer.append(post.contentWarning)
        buffer.append(post.language)
        buffer.append(post.visibility?.rawValue)
        buffer.append(post.repost?.by.id.rawValue)
        buffer.append(post.repost?.originalID.rawValue)
        buffer.append(AttachmentRow.encode(post.attachments))
    }

    private mutating func appendUser(_ user: User) {
        users.append(buffer.end)
        buffer.append(user.id.rawValue)
        buffer.append(user.handle)
        buffer.append(user.displayName)
        buffer.append(user.avatarURL?.absoluteString)
    }
}
