import Core
import Foundation

/// Removes what a feed's ``Core/Retention`` no longer keeps, after its sync and under its lease:
/// batches of at most ``batchSize`` posts, each its own transaction, so a store shared with
/// readers and other daemons is never held long; at most ``maxBatches`` a sync, so a feed with
/// a huge backlog finishes it over several syncs rather than holding its lease for long.
struct RetentionPass: Sendable {
    /// The most posts one transaction removes (of each kind: too old, beyond the count).
    static let batchSize = 500
    /// The most batches one sync runs.
    static let maxBatches = 100

    let pruner: any PostPruner
    /// The feed's lease, held by the sync: never another daemon's.
    let lease: FeedLease

    /// - Returns: how many posts were removed.
    /// - Throws: the store's failure, or ``Core/ServiceError`` `.locked` when the lease was lost.
    func run(_ retention: Retention, now: Date) async throws -> Int {
        var removed = 0
        for _ in 0..<Self.maxBatches {
            try Task.checkCancellation()
            let batch = try await pruner.prune(retention, now: now, limit: Self.batchSize, under: lease)
            removed += batch
            if batch < Self.batchSize { break }
        }
        return removed
    }
}
