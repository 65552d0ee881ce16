import Core
import Foundation
import StoreKit

/// A page's changes as rows ready to bind: every post's columns, each author once, the
/// video ids to keep placeholders for, in one ``RowBuffer``.
struct PageRows {
    /// Values per post row, the codec's columns (``PostColumns/columns``). With `feed` as
    /// parameter 1 they are parameters 2…24 of the post statements.
    static let postWidth = PostColumns.columns.count
    /// Values per user row: ``UserColumns/names`` (parameters 2…6).
    static let userWidth = UserColumns.names.count
    /// Where a user row's handle, name and profile time are, from its start.
    static let userID = UserColumns.names.firstIndex(of: "id")!
    static let userHandle = UserColumns.names.firstIndex(of: "handle")!
    static let userDisplayName = UserColumns.names.firstIndex(of: "display_name")!
    static let userProfileAt = UserColumns.names.firstIndex(of: "profile_at")!

    enum Step {
        /// Upsert the post whose values start at `start`, written by the author of ``users``
        /// slot `author` (and reposted by the one of slot `reposter`).
        case upsert(start: Int, author: Int, reposter: Int?)
        /// Delete the post whose id is the value at this index.
        case delete(Int)
    }

    private(set) var buffer: RowBuffer
    /// The page's changes in order, so an upsert and a delete of one id keep their order.
    private(set) var steps: [Step] = []
    /// The post id of each step.
    private(set) var ids: [PostID] = []
    /// Where each distinct author's row starts, by slot.
    private(set) var users: [Int] = []
    /// Where each distinct referenced video id is.
    private(set) var videoIDs: [Int] = []

    init(_ changes: [FeedChange]) {
        buffer = RowBuffer(reservingValues: changes.count * (Self.postWidth + 2), bytes: changes.count * 512)
        steps.reserveCapacity(changes.count)
        // Each author once, with the profile of their newest post on the page: a profile is
        // only as fresh as the post that carried it.
        var slots: [UserID: Int] = [:]
        var profiles: [(user: User, at: Date)] = []
        /// The author's slot in ``users``.
        func note(_ user: User, at date: Date) -> Int {
            if let slot = slots[user.id] {
                if date > profiles[slot].at { profiles[slot] = (user, date) }
                return slot
            }
            slots[user.id] = profiles.count
            profiles.append((user, date))
            return profiles.count - 1
        }
        var seenVideos = Set<VideoID>()
        for change in changes {
            switch change {
            case .upsert(let post): ids.append(post.id)
            case .delete(let id): ids.append(id)
            }
            switch change {
            case .upsert(let post):
                let start = buffer.end
                appendPost(post)
                let author = note(post.author, at: post.createdAt)
                let reposter = post.repost.map { note($0.by, at: $0.at ?? post.createdAt) }
                steps.append(.upsert(start: start, author: author, reposter: reposter))
                for id in post.videoIDs where seenVideos.insert(id).inserted {
                    videoIDs.append(buffer.end)
                    buffer.append(id.rawValue)
                }
            case .delete(let id):
                steps.append(.delete(buffer.end))
                buffer.append(id.rawValue)
            }
        }
        for profile in profiles { appendUser(profile.user, at: profile.at) }
    }

    private mutating func appendPost(_ post: Post) {
        PostColumns(post, dialect: .sqlite).write(to: &buffer)
    }

    private mutating func appendUser(_ user: User, at date: Date) {
        users.append(buffer.end)
        UserColumns(user, at: date).write(to: &buffer)
    }
}
