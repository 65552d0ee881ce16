import Core
import Foundation
import StoreKit

/// Each feed's status, for `feedsync status` and the schedule, with who holds its lease; run
/// records and the backend are ``SQLStore``'s statements, sent behind the feed's lease in two
/// round trips rather than one per statement (issue 40).
extension PostgresFeedStore {
    /// Records the run (``StoreKit/StoreSQL/recordRun(_:ofFeed:)``) only while `lease` is this worker's.
    ///
    /// - Throws: ``Core/ServiceError`` `.locked` when the lease was lost: a run another worker
    ///   took over is not recorded, since it would overlap theirs.
    public func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) throws {
        try fenced(lease, "recording the sync of feed \(lease.feed)", sending: Self.sql.recordRun(outcome, ofFeed: lease.feed).map(\.pipelined))
    }

    public func setBackend(_ backend: String, under lease: FeedLease) throws {
        try fenced(lease, "recording the backend of feed \(lease.feed)", sending: [Self.sql.setBackend(backend, ofFeed: lease.feed).pipelined])
    }

    /// Who holds a feed's lease now, in words, while it does.
    private static let leaseHolder = """
        (SELECT l.holder FROM feed_leases l WHERE l.feed = f.name AND l.token IS NOT NULL AND l.expires_at > \(nowMs))
        """

    public func feedStatuses() throws -> [FeedStatus] {
        try query("reading feed status", Self.sql.feedStatuses(leaseHolder: Self.leaseHolder))
    }

    public func feedStatuses(changedSince since: Date) throws -> [FeedStatus] {
        try query("reading feed status", Self.sql.feedStatuses(leaseHolder: Self.leaseHolder, changedSince: since))
    }

    public func feedStatuses(after name: String?, limit: Int) throws -> [FeedStatus] {
        try query("reading feed status", Self.sql.feedStatuses(leaseHolder: Self.leaseHolder, after: name, limit: limit))
    }
}
