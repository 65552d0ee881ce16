import Core
import Foundation
import StoreKit

/// Which of many due feeds another daemon synced since this one found them due, in one statement
/// (issue 40: three daemons walking 100,000 feeds claimed each of them three times).
extension PostgresFeedStore: SyncedSinceCheck {
    /// The claim's own test (``claim(_:holder:onlyIfDue:dueSince:)``) for many feeds at once, read
    /// without locking: a feed whose lease is live is left to the claim (it answers `held`
    /// first), and so is one whose next attempt is not ahead and that no successful run ended at
    /// or after its `since`.
    public func feedsSynced(since due: [DueFeed]) throws -> [SyncedFeed] {
        guard !due.isEmpty else { return [] }
        let rows = try run("looking up which of \(due.count) due feeds another daemon synced", Self.syncedSince,
                           [pgArray(due.map(\.feed)), "{" + due.map { "\(StoredTime.milliseconds($0.since))" }.joined(separator: ",") + "}"])
        return rows.compactMap { row in
            guard row.count == 2, let feed = row[0] else { return nil }
            return SyncedFeed(feed: feed, nextAttempt: row[1].flatMap(Int64.init).map(StoredTime.date))
        }
    }

    private static let syncedSince = """
        SELECT d.feed, f.next_attempt_at
        FROM unnest($1::text[], $2::bigint[]) AS d(feed, since)
        LEFT JOIN feeds f ON f.name = d.feed
        WHERE NOT EXISTS (SELECT 1 FROM feed_leases l WHERE l.feed = d.feed AND l.token IS NOT NULL AND l.expires_at > \(nowMs))
          AND (\(scheduledAhead("f.next_attempt_at")) OR \(succeededSince(feed: "d.feed", since: "d.since")))
        """
}
