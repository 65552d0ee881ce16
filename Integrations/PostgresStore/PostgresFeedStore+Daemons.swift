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
    }

    /// Records when this daemon will next sync the feed, and that this daemon set it.
    ///
    /// The daemon schedules a feed after its sync has given the lease back, so this write is
    /// fenced by the lease row rather than a held token: it fails (`.locked`) while another
    /// worker holds the feed, and, while this worker holds it, unless the lease is still its own.
    /// Clearing (`nil`) clears only a schedule this daemon recorded (see ``unschedule(_:)``).
    public func setNextAttempt(_ date: Date?, ofFeed feed: String) throws {
        let operation = "scheduling feed \(feed)"
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
