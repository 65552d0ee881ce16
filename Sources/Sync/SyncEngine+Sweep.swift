import Core
import Foundation

/// The sweep after a full walk: the cached posts the server no longer lists.
extension SyncEngine {
    /// After a full walk, deletes the cached posts the server no longer has, unless that would
    /// delete more than ``Options/maxDeletionRatio`` of the feed: a server that suddenly
    /// answers with an empty feed must not wipe the cache.
    func sweepUnseenPosts(of walk: FullWalk) async throws -> Int {
        let (unseen, cached) = try await services.store.unseenPosts(of: walk)
        let ratio = cached == 0 ? 0 : Double(unseen) / Double(cached)
        guard unseen == 0 || ratio <= options.maxDeletionRatio || options.forceDelete else {
            throw ServiceError(.refused, "finishing the full sync of feed \(feed)",
                               "it would delete \(unseen) of \(cached) cached posts (\(Int((ratio * 100).rounded()))%), more than the "
                               + "\(Int((options.maxDeletionRatio * 100).rounded()))% allowed; nothing was deleted. If the server really "
                               + "lost them, run `feedsync pull --full --force-delete`")
        }
        return unseen > 0 ? try await services.store.deleteUnseenPosts(of: walk) : 0
    }
}
