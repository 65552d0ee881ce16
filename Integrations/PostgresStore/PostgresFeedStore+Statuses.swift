import Core
import Foundation
import StoreKit

/// Run records, behind the feed's lease, and each feed's status, for `feedsync status` and the schedule.
extension PostgresFeedStore: SyncRecorder {
    public func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) throws {
        // A run whose lease another worker took over is not recorded: it would overlap theirs.
        try fenced(lease, "recording the sync of feed \(lease.feed)") { db in
            for statement in Self.sql.recordRun(outcome, ofFeed: lease.feed) { try db.run(statement) }
        }
    }

    /// Who holds a feed's lease now, in words, while it does.
    private static let leaseHolder = """
        (SELECT l.holder FROM feed_leases l WHERE l.feed = f.name AND l.token IS NOT NULL AND l.expires_at > \(nowMs))
        """

    public func feedStatuses() throws -> [FeedStatus] {
        try query("reading feed status", Self.sql.feedStatuses(leaseHolder: Self.leaseHolder))
    }
}
