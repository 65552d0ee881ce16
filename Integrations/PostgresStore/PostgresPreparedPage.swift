import Core
import Foundation

/// A page as ``PostgresFeedStore/apply(_:videos:toFeed:)`` sends it: the page's net effect, its
/// posts as COPY lines and its authors and videos as parameters, all encoded before the store's
/// queue is reached (``PostgresFeedStore/prepare(_:)``), so the next page is encoded while one commits.
struct PostgresPreparedPage: PreparedPage {
    let page: FeedPage
    /// The posts to upsert, in COPY's text format, and how many.
    let copyLines: [UInt8]
    let upsertCount: Int
    /// The authors and reposters, newest profile each, as a JSON array of ``PostgresUserRow``; `nil` when none.
    let profiles: String?
    /// Every video id the page's posts name, once each, as a text array; `nil` when none.
    let videoIDs: String?
    /// The ids deleted, as a text array; `nil` when none.
    let deletions: String?
    /// Each upserted post's videos in order, by post id; posts without videos are left out.
    let videosByPost: [String: [String]]

    init(_ page: FeedPage) {
        self.page = page
        // The page's net effect, in its order: the last change to an id wins (one statement
        // cannot touch a row twice).
        var last: [PostID: FeedChange] = [:]
        var order: [PostID] = []
        var profiles: [String: PostgresUserRow] = [:]
        var videoIDs: [String] = []
        var seenVideos = Set<String>()
        for change in page.changes {
            let id: PostID
            switch change {
            case .upsert(let post):
                id = post.id
                for (user, at) in [(post.author, post.createdAt)] + (post.repost.map { [($0.by, $0.at ?? post.createdAt)] } ?? []) {
                    let row = PostgresUserRow(id: user.id.rawValue, handle: user.handle, display_name: user.displayName,
                                              avatar_url: user.avatarURL?.absoluteString, profile_at: milliseconds(at))
                    if let known = profiles[row.id], known.profile_at >= row.profile_at { continue }
                    profiles[row.id] = row
                }
                for video in post.videoIDs where seenVideos.insert(video.rawValue).inserted { videoIDs.append(video.rawValue) }
            case .delete(let deleted):
                id = deleted
            }
            if last.updateValue(change, forKey: id) == nil { order.append(id) }
        }
        var lines: [UInt8] = [], deletions: [String] = [], videosByPost: [String: [String]] = [:], upserts = 0
        lines.reserveCapacity(order.count * 400)
        for id in order {
            switch last[id] {
            case .upsert(let post):
                PostgresPostRow(post).appendCopyLine(to: &lines)
                upserts += 1
                if !post.videoIDs.isEmpty { videosByPost[post.id.rawValue] = post.videoIDs.map(\.rawValue) }
            case .delete(let id): deletions.append(id.rawValue)
            case nil: break
            }
        }
        copyLines = lines
        upsertCount = upserts
        self.profiles = profiles.isEmpty ? nil : jsonText(Array(profiles.values))
        self.videoIDs = videoIDs.isEmpty ? nil : pgArray(videoIDs)
        self.deletions = deletions.isEmpty ? nil : pgArray(deletions)
        self.videosByPost = videosByPost
    }
}
