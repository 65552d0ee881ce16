import Core
import Foundation
import StoreKit

/// Daemon presence and the schedule: a row per running daemon, and each feed's next attempt
/// with the daemon that set it.
extension PostgresFeedStore: DaemonPresence {
    public func join(startedAt: Date) throws -> DaemonInstance {
        let daemon = DaemonInstance(id: "\(host)/\(process)/\(StoredTime.milliseconds(startedAt))", host: host, process: process,
                                    startedAt: startedAt, beatAt: Date())
        instance = daemon.id
        // Records of daemons that have not beaten for a day are gone for good.
        try run("recording the daemon", "DELETE FROM daemon WHERE beat_at < \(Self.nowMs) - 86400000")
        try beat(daemon)
        return daemon
    }

    public func beat(_ daemon: DaemonInstance) throws {
        try run("recording the daemon heartbeat", """
            INSERT INTO daemon (instance, host, pid, started_at, beat_at) VALUES ($1, $2, $3, $4, \(Self.nowMs))
            ON CONFLICT (instance) DO UPDATE SET beat_at = \(Self.nowMs)
            """, [daemon.id, daemon.host, Int32(daemon.process).map { "\($0)" }, "\(StoredTime.milliseconds(daemon.startedAt))"])
    }

    public func leave(_ daemon: DaemonInstance) {
        _ = try? run("clearing the daemon", Self.sql.leave(daemon))
        _ = try? run("releasing the daemon's leases", """
            UPDATE feed_leases SET token = NULL, holder = NULL, instance = NULL, expires_at = NULL WHERE instance = $1
            """, [daemon.id])
        held = [:]
        prefetched = [:]
    }

    /// Records when this daemon will next sync the feed, and that this daemon set it.
    ///
    /// The daemon schedules a feed after its sync has given the lease back, so this write is
    /// fenced by the lease row rather than a held token: it fails (`.locked`) while another
    /// worker holds the feed, and, while this worker holds it, unless the lease is still its own.
    /// Clearing (`nil`) clears only a schedule this daemon recorded (see ``unschedule(_:)``).
    public func setNextAttempt(_ date: Date?, ofFeed feed: String) throws {
        let operation = "scheduling feed \(feed)"
        // While this worker holds the feed, its own lease is checked (and renewed) first.
        guard heldToken(feed) == nil else { return try setNextAttemptHolding(date, ofFeed: feed, operation) }
        let other = try run(operation, date == nil ? Self.unscheduleFree : Self.scheduleFree,
                            [feed, date.map { "\(StoredTime.milliseconds($0))" }, instance])
        if let row = other.first {
            throw ServiceError(.locked, operation, "\(row.first.flatMap { $0 } ?? "another worker") holds the feed's lease; nothing was kept")
        }
    }

    /// The schedule's write while this worker holds the feed: behind its own lease.
    private func setNextAttemptHolding(_ date: Date?, ofFeed feed: String, _ operation: String) throws {
        let db = try db(operation)
        try storage(operation) {
            try db.transaction {
                try checkNoOtherHolder(feed, operation, in: db)
                if let date {
                    try db.query("""
                        INSERT INTO feeds (name, next_attempt_at, scheduled_by) VALUES ($1, $2, $3)
                        ON CONFLICT (name) DO UPDATE SET next_attempt_at = $2, scheduled_by = $3
                        WHERE (feeds.next_attempt_at, feeds.scheduled_by) IS DISTINCT FROM ($2::bigint, $3::text)
                        """, [feed, "\(StoredTime.milliseconds(date))", instance])
                } else {
                    try db.query("""
                        UPDATE feeds SET next_attempt_at = NULL, scheduled_by = NULL
                        WHERE name = $1 AND next_attempt_at IS NOT NULL AND scheduled_by IS NOT DISTINCT FROM $2
                        """, [feed, instance])
                }
            }
        }
    }

    /// Another worker's live lease on the feed (`$1`), locked until the statement ends: the
    /// schedule is written only without one, and the holder returned (one row) when there is.
    private static let otherHolder = """
        other AS (SELECT holder FROM feed_leases WHERE feed = $1 AND token IS NOT NULL AND expires_at > \(nowMs) FOR UPDATE)
        """

    /// Records the next attempt (`$2`) and who set it (`$3`) in one statement, fenced by
    /// ``otherHolder`` (a round trip, where a transaction took four; issue 40).
    private static let scheduleFree = """
        WITH \(otherHolder),
        written AS (INSERT INTO feeds (name, next_attempt_at, scheduled_by) SELECT $1, $2::bigint, $3::text WHERE NOT EXISTS (SELECT 1 FROM other)
                    ON CONFLICT (name) DO UPDATE SET next_attempt_at = $2::bigint, scheduled_by = $3::text
                    WHERE (feeds.next_attempt_at, feeds.scheduled_by) IS DISTINCT FROM ($2::bigint, $3::text) RETURNING 1)
        SELECT holder FROM other
        """

    /// Clears the next attempt, only where this daemon (`$3`) recorded it; `$2` is unused (NULL).
    private static let unscheduleFree = """
        WITH \(otherHolder),
        cleared AS (UPDATE feeds SET next_attempt_at = NULL, scheduled_by = NULL
                    WHERE name = $1 AND next_attempt_at IS NOT NULL AND scheduled_by IS NOT DISTINCT FROM $3::text
                      AND $2::bigint IS NULL AND NOT EXISTS (SELECT 1 FROM other) RETURNING 1)
        SELECT holder FROM other
        """

    /// Clears the schedule this daemon recorded for `feeds`, for a daemon that stops: another
    /// daemon serving the same feeds may sync them when due, without waiting out this one's
    /// plan. A feed another daemon scheduled since, or holds the lease on now, is left as it is.
    public func unschedule(_ feeds: [String]) throws {
        guard !feeds.isEmpty else { return }
        try run("clearing the schedule of this daemon's feeds", """
            UPDATE feeds f SET next_attempt_at = NULL, scheduled_by = NULL
            WHERE f.name = ANY($1::text[]) AND f.next_attempt_at IS NOT NULL AND f.scheduled_by IS NOT DISTINCT FROM $2
                AND NOT EXISTS (SELECT 1 FROM feed_leases l WHERE l.feed = f.name AND l.token IS NOT NULL
                                AND l.expires_at > \(Self.nowMs))
            """, [pgArray(feeds), instance])
    }
}
