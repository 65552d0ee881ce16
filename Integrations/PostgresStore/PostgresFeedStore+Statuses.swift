import Core
import Foundation

/// Run records, behind the feed's lease.
extension PostgresFeedStore: SyncRecorder {
    public func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) throws {
        let feed = lease.feed
        // What is stored may be published with the mirror: sentences from outside pass the redaction.
        let error = Redaction.redact(outcome.error)
        let db = try db("recording the sync of feed \(feed)")
        let report = outcome.report
        let finished = "\(milliseconds(outcome.finishedAt))"
        try storage("recording the sync of feed \(feed)") {
            try db.transaction {
                // A run whose lease another worker took over is not recorded: it would overlap theirs.
                try checkLease(lease, "recording the sync of feed \(feed)", in: db)
                try db.query("""
                    INSERT INTO sync_runs (feed, started_at, finished_at, error, new_posts, updated_posts, deleted_posts,
                                           skipped_items, pages, requests, rows_written)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                    """, [feed, "\(milliseconds(outcome.startedAt))", finished, error,
                          report.map { "\($0.newPosts)" }, report.map { "\($0.updatedPosts)" }, report.map { "\($0.deletedPosts)" },
                          report.map { "\($0.skippedItems)" }, report.map { "\($0.pages)" }, report.map { "\($0.requests)" },
                          report.map { "\($0.rowsWritten)" }])
                if let error {
                    try db.query("""
                        INSERT INTO feeds (name, last_error_at, last_error, consecutive_failures) VALUES ($1, $2, $3, 1)
                        ON CONFLICT (name) DO UPDATE SET last_error_at = $2, last_error = $3,
                            consecutive_failures = feeds.consecutive_failures + 1
                        """, [feed, finished, error])
                } else {
                    // Only a walk that would sweep says anything new about the sweep.
                    try db.query("""
                        INSERT INTO feeds (name, last_success_at, location, polling_stopped, sweep_withheld, discovered_from)
                        VALUES ($1, $2, $3, $4, $6, $7)
                        ON CONFLICT (name) DO UPDATE SET last_success_at = $2, consecutive_failures = 0, location = $3, polling_stopped = $4,
                            sweep_withheld = CASE WHEN $5::boolean THEN $6 ELSE feeds.sweep_withheld END, discovered_from = $7
                        """, [feed, finished, report?.polling?.location, Redaction.redact(report?.polling?.stopped),
                              report?.walkedToSweep == true ? "true" : "false", Redaction.redact(report?.sweepWithheld), report?.polling?.discoveredFrom])
                }
            }
        }
    }
}
