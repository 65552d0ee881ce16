import Core
import Foundation

/// A page's changes as rows ready to bind: every post's columns, each author once, the
/// video ids to keep placeholders for, in one ``RowBuffer``.
struct PageRows {
    /// Values per post row: id, author_id, text, created_at, edited_at, reply_to, reply/repost/
    /// like counts, video_ids, html, content_warning, language, visibility, repost_by, repost_of,
    /// attachments, title, url, quote_of, quote_count, labels, repost_at. With `feed` as
    /// parameter 1 they are parameters 2…24 of the post statements.
    static let postWidth = 23
    /// Values per user row: id, handle, display_name, avatar_url, profile_at (parameters 2…6).
    static let userWidth = 5

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
        // Each author once, with the profile of their newest post on the page: a profile is
        // only as fresh as the post that carried it.
        var profiles: [UserID: (user: User, at: Date)] = [:]
        var order: [UserID] = []
        func note(_ user: User, at date: Date) {
            if let known = profiles[user.id] {
                if date > known.at { profiles[user.id] = (user, date) }
            } else {
                profiles[user.id] = (user, date)
                order.append(user.id)
            }
        }
        var seenVideos = Set<VideoID>()
        for change in changes {
            switch change {
            case .upsert(let post):
                steps.append(.upsert(buffer.end))
                appendPost(post)
                note(post.author, at: post.createdAt)
                if let repost = post.repost { note(repost.by, at: repost.at ?? post.createdAt) }
                for id in post.videoIDs where seenVideos.insert(id).inserted {
                    videoIDs.append(buffer.end)
                    buffer.append(id.rawValue)
                }
            case .delete(let id):
                steps.append(.delete(buffer.end))
                buffer.append(id.rawValue)
            }
        }
        for id in order {
            if let profile = profiles[id] { appendUser(profile.user, at: profile.at) }
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
        buffer.append(post.title)
        buffer.append(post.url?.absoluteString)
        buffer.append(post.quoteOf?.rawValue)
        buffer.append(Int64(post.counts.quotes))
        buffer.append(post.labels.isEmpty ? "[]" : JSONStringArray.encode(post.labels))
        buffer.append(post.repost?.at.map(millisecondsSince1970))
    }

    private mutating func appendUser(_ user: User, at date: Date) {
        users.append(buffer.end)
        buffer.append(user.id.rawValue)
        buffer.append(user.handle)
        buffer.append(user.displayName)
        buffer.append(user.avatarURL?.absoluteString)
        buffer.append(millisecondsSince1970(date))
    }
}
