import Core
import Foundation
import StoreKit

/// Which of many due feeds another daemon synced since this one found them due, in one statement
/// (issue 40: three daemons walking 100,000 feeds claimed each of them three times); and which
/// leases ran out held, so a dead daemon's feeds are taken over at their expiry.
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

    /// Each feed's next attempt by its own look in the primary key (`OFFSET 0` keeps the planner
    /// from turning it into a join): as a join, the planner hashed the whole `feeds` table for
    /// each 64 feeds asked about, 9.8 ms a look at 11,000 feeds (EXPLAIN ANALYZE, issue 40).
    private static let syncedSince = """
        SELECT d.feed, d.next_attempt_at
        FROM (SELECT u.feed, u.since, (SELECT f.next_attempt_at FROM feeds f WHERE f.name = u.feed) AS next_attempt_at
              FROM unnest($1::text[], $2::bigint[]) AS u(feed, since) OFFSET 0) AS d
        WHERE NOT EXISTS (SELECT 1 FROM feed_leases l WHERE l.feed = d.feed AND l.token IS NOT NULL AND l.expires_at > \(nowMs))
          AND (\(scheduledAhead("d.next_attempt_at")) OR \(succeededSince(feed: "d.feed", since: "d.since")))
        """
}

extension PostgresFeedStore: ExpiredLeaseCheck {
    /// Read without locking, by a scan of `feed_leases` (a row per feed, a few megabytes at 100,000
    /// feeds): an index on the expiry would make every claim and release, which set it, write the
    /// primary key's index too rather than update the row in place.
    public func expiredLeases(limit: Int) throws -> [ExpiredLease] {
        let rows = try run("looking up leases that ran out held", """
            SELECT feed, expires_at FROM feed_leases WHERE token IS NOT NULL AND expires_at <= \(Self.nowMs)
            ORDER BY expires_at LIMIT $1
            """, ["\(max(limit, 0))"])
        return rows.compactMap { row in
            guard row.count == 2, let feed = row[0], let expiry = row[1].flatMap(Int64.init) else { return nil }
            return ExpiredLease(feed: feed, expiry: StoredTime.date(expiry))
        }
    }
}
