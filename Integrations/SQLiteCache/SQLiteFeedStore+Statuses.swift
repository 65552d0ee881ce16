import Core
import Foundation

/// Run records and each feed's status, for `feedsync status` and the schedule.
extension SQLiteFeedStore {
    public func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) throws {
        // SQLite's lease is this process's lock on the file, which it cannot lose (see `apply`).
        let feed = lease.feed
        // What is stored may be published with the mirror: sentences from outside pass the redaction.
        let error = Redaction.redact(outcome.error)
        let db = try db("recording the sync of feed \(feed)")
        try storage("recording the sync of feed \(feed)") {
            try db.withTransaction {
                let finished = millisecondsSince1970(outcome.finishedAt)
                let report = outcome.report
                try db.statement("""
                    INSERT INTO sync_runs (feed, started_at, finished_at, error, new_posts, updated_posts, deleted_posts,
                                           skipped_items, pages, requests, rows_written)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).run([.text(feed), .integer(millisecondsSince1970(outcome.startedAt)), .integer(finished), .text(error),
                              .integer(report?.newPosts), .integer(report?.updatedPosts), .integer(report?.deletedPosts),
                              .integer(report?.skippedItems), .integer(report?.pages), .integer(report?.requests),
                              .integer(report?.rowsWritten)])
                if let error {
                    try db.statement("""
                        INSERT INTO feeds (name, last_error_at, last_error, consecutive_failures) VALUES (?1, ?2, ?3, 1)
                        ON CONFLICT (name) DO UPDATE SET last_error_at = ?2, last_error = ?3,
                            consecutive_failures = consecutive_failures + 1
                        """).run([.text(feed), .integer(finished), .text(error)])
                } else {
                    let polling = report?.polling
                    // Only a walk that would sweep says anything new about the sweep.
                    try db.statement("""
                        INSERT INTO feeds (name, last_success_at, location, polling_stopped, sweep_withheld, discovered_from)
                        VALUES (?1, ?2, ?3, ?4, ?6, ?7)
                        ON CONFLICT (name) DO UPDATE SET last_success_at = ?2, consecutive_failures = 0,
                            location = ?3, polling_stopped = ?4, sweep_withheld = CASE WHEN ?5 THEN ?6 ELSE sweep_withheld END,
                            discovered_from = ?7
                        """).run([.text(feed), .integer(finished), .text(polling?.location), .text(Redaction.redact(polling?.stopped)),
                                  .integer(report?.walkedToSweep == true ? 1 : 0), .text(Redaction.redact(report?.sweepWithheld)),
                                  .text(polling?.discoveredFrom)])
                }
            }
        }
    }

    public func feedStatuses() throws -> [FeedStatus] {
        let db = try db("reading feed status")
        return try storage("reading feed status") {
            try db.statement("""
                SELECT f.name, f.cursor, f.cursor_validator, f.last_success_at, f.last_error_at, f.last_error,
                       f.consecutive_failures, f.next_attempt_at, (SELECT COUNT(*) FROM posts p WHERE p.feed = f.name),
                       f.location, f.polling_stopped, f.sweep_withheld, f.discovered_from
                FROM feeds f ORDER BY f.name
                """).query { row in
                FeedStatus(feed: row.string(0) ?? "", cursor: row.string(1).map { FeedCursor(position: $0, validator: row.string(2)) },
                           lastSuccessAt: row.optionalInt64(3).map(Date.init(milliseconds:)),
                           lastErrorAt: row.optionalInt64(4).map(Date.init(milliseconds:)),
                           lastError: row.string(5), consecutiveFailures: Int(row.int64(6)),
                           nextAttemptAt: row.optionalInt64(7).map(Date.init(milliseconds:)), postCount: Int(row.int64(8)),
                           location: row.string(9), discoveredFrom: row.string(12), pollingStopped: row.string(10),
                           sweepWithheld: row.string(11))
            }
        }
    }
}
