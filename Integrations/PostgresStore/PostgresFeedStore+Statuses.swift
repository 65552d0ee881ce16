import Core
import Foundation
import StoreKit

/// Each feed's status, for `feedsync status` and the schedule, with who holds its lease; run
/// records are ``SQLStore``'s `recordSync(_:under:)`, behind the feed's lease.
extension PostgresFeedStore {
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
}
