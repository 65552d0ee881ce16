import Core
import Foundation

/// The end of a walk from the start: deletes the cached posts the server no longer lists,
/// unless the walk cannot tell which those are, or they are too many to be believed.
struct FullWalkSweep: Sendable {
    /// The lease the walk was made under; the sweep deletes only while it still holds.
    let lease: FeedLease
    let store: any FeedSweeper
    let options: SyncEngine.Options

    /// Sweeps after `walk`, noting in `report` what it deleted, or why it deleted nothing.
    ///
    /// - Throws: ``ServiceError`` `.refused` when the sweep would delete more than
    ///   ``SyncEngine/Options/maxDeletionRatio`` of the feed (and not ``SyncEngine/Options/forceDelete``):
    ///   a server that suddenly answers with an empty feed must not wipe the cache.
    func finish(_ walk: FullWalk, report: inout SyncReport) async throws {
        report.walkedToSweep = true
        if let item = walk.unidentified {
            // The skipped item may be a stored post the server still lists: delete nothing.
            let withheld = "nothing was deleted as gone, since an item was skipped without an id "
                + "(\(Terminal.safe(item.reason, limit: 120))), so the walk cannot tell which posts the server still lists"
            report.sweepWithheld = withheld
            options.log.notice("feed \(feed): \(withheld)")
        } else {
            report.deletedPosts += try await deleteUnseenPosts(of: walk)
        }
    }

    private func deleteUnseenPosts(of walk: FullWalk) async throws -> Int {
        let (unseen, cached) = try await store.unseenPosts(of: walk)
        let ratio = cached == 0 ? 0 : Double(unseen) / Double(cached)
        guard unseen == 0 || ratio <= options.maxDeletionRatio || options.forceDelete else {
            throw ServiceError(.refused, "finishing the full sync of feed \(feed)",
                               "it would delete \(unseen) of \(cached) cached posts (\(Int((ratio * 100).rounded()))%), more than the "
                               + "\(Int((options.maxDeletionRatio * 100).rounded()))% allowed; nothing was deleted. If the server really "
                               + "lost them, run `feedsync pull --full --force-delete`")
        }
        return unseen > 0 ? try await store.deleteUnseenPosts(of: walk, under: lease) : 0
    }

    var feed: String { lease.feed }
}
