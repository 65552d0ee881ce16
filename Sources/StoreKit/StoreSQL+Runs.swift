import Core
import Foundation

/// Run records and each feed's status, for `feedsync status` and the schedule.
extension StoreSQL {
    private static let insertRun = Shared("""
        INSERT INTO sync_runs (feed, started_at, finished_at, error, new_posts, updated_posts, deleted_posts,
                               skipped_items, pages, requests, rows_written)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
        """)
    private static let recordFailure = Shared("""
        INSERT INTO feeds (name, last_error_at, last_error, consecutive_failures) VALUES ($1, $2, $3, 1)
        ON CONFLICT (name) DO UPDATE SET last_error_at = excluded.last_error_at, last_error = excluded.last_error,
            consecutive_failures = feeds.consecutive_failures + 1
        """)
    // Only a walk that would sweep ($7 = 1) says anything new about the sweep.
    private static let recordSuccess = Shared("""
        INSERT INTO feeds (name, last_success_at, location, polling_stopped, sweep_withheld, discovered_from)
        VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (name) DO UPDATE SET last_success_at = excluded.last_success_at, consecutive_failures = 0,
            location = excluded.location, polling_stopped = excluded.polling_stopped,
            sweep_withheld = CASE WHEN $7 = 1 THEN excluded.sweep_withheld ELSE feeds.sweep_withheld END,
            discovered_from = excluded.discovered_from
        """)

    /// The statements that record how a run ended: its row in `sync_runs`, and the feed's
    /// failure count and last error, or (on a success) its backend when the outcome names one,
    /// its last success, its ``PollingHint`` and the sweep's verdict. One transaction's worth, in order.
    ///
    /// What is stored may be published with the mirror: the sentences that come from outside
    /// (the error, the stop reason, why a sweep was withheld) pass the ``Redaction``.
    public func recordRun(_ outcome: SyncOutcome, ofFeed feed: String) -> [StoreStatement] {
        let error = Redaction.redact(outcome.error)
        let finished = SQLValue.integer(StoredTime.milliseconds(outcome.finishedAt))
        let report = outcome.report
        let run = statement(Self.insertRun, [
            .text(feed), .integer(StoredTime.milliseconds(outcome.startedAt)), finished, .text(error),
            .integer(report?.newPosts), .integer(report?.updatedPosts), .integer(report?.deletedPosts),
            .integer(report?.skippedItems), .integer(report?.pages), .integer(report?.requests), .integer(report?.rowsWritten),
        ])
        if let error {
            return [run, statement(Self.recordFailure, [.text(feed), finished, .text(error)])]
        }
        let polling = report?.polling
        let backend = outcome.backend.map { setBackend($0, ofFeed: feed) }
        return [run] + (backend.map { [$0] } ?? []) + [statement(Self.recordSuccess, [
            .text(feed), finished, .text(polling?.location), .text(Redaction.redact(polling?.stopped)),
            .text(Redaction.redact(report?.sweepWithheld)), .text(polling?.discoveredFrom),
            .integer(report?.walkedToSweep == true ? 1 : 0),
        ])]
    }

    private static let feedStatuses = """
        SELECT f.name, f.cursor, f.cursor_validator, f.last_success_at, f.last_error_at, f.last_error,
               f.consecutive_failures, f.next_attempt_at, (SELECT COUNT(*) FROM posts p WHERE p.feed = f.name),
               f.location, f.polling_stopped, f.sweep_withheld, f.discovered_from, LEASE_HOLDER, f.pruned_posts, f.pruned_at
        FROM feeds f ORDER BY f.name
        """

    /// Every feed's status, by name; with `changedSince`, only the feeds whose last success,
    /// last error or last prune is at or after it.
    ///
    /// - Parameter leaseHolder: an expression, over the feed's row `f`, for who holds its lease
    ///   in words (a store whose leases are rows); `NULL` where the store cannot tell.
    ///
    /// With `after` and `limit`, at most `limit` feeds whose names come after `after` (a page
    /// of a walk by name, for a reader that must not hold 100,000 statuses at once).
    public func feedStatuses(leaseHolder: String = "NULL", changedSince: Date? = nil,
                             after: String? = nil, limit: Int? = nil) -> StoreQuery<FeedStatus> {
        var sql = Self.feedStatuses.replacingOccurrences(of: "LEASE_HOLDER", with: leaseHolder)
        var parameters: [SQLValue] = []
        if let changedSince {
            sql = sql.replacingOccurrences(of: "FROM feeds f ORDER BY", with: """
                FROM feeds f WHERE f.last_success_at >= $1 OR f.last_error_at >= $1 OR f.pruned_at >= $1 ORDER BY
                """)
            parameters = [.integer(StoredTime.milliseconds(changedSince))]
        } else if let limit {
            sql = sql.replacingOccurrences(of: "FROM feeds f ORDER BY f.name", with: "FROM feeds f WHERE f.name > $1 ORDER BY f.name LIMIT $2")
            parameters = [.text(after ?? ""), .integer(Int64(max(limit, 1)))]
        }
        return StoreQuery(dialect.render(sql), parameters) { row in
            FeedStatus(feed: row.text(0) ?? "", cursor: row.text(1).map { FeedCursor(position: $0, validator: row.text(2)) },
                       lastSuccessAt: row.integer(3).map(StoredTime.date), lastErrorAt: row.integer(4).map(StoredTime.date),
                       lastError: row.text(5), consecutiveFailures: Int(clamping: row.integer(6) ?? 0),
                       nextAttemptAt: row.integer(7).map(StoredTime.date), postCount: Int(clamping: row.integer(8) ?? 0),
                       location: row.text(9), discoveredFrom: row.text(12), pollingStopped: row.text(10),
                       leaseHolder: row.text(13), sweepWithheld: row.text(11),
                       prunedPosts: Int(clamping: row.integer(14) ?? 0), prunedAt: row.integer(15).map(StoredTime.date))
        }
    }
}
