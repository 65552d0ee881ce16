/// The store's role that keeps each feed's run records, for `feedsync status` and the schedule.
public protocol SyncRecorder: Sendable {
    /// Records how a sync run ended, counting consecutive failures (a success resets them), and
    /// on a success the report's ``PollingHint`` location and stop reason (cleared when absent).
    /// - Throws: ``ServiceError`` `.locked` when the run's `lease` was lost meanwhile: a run
    ///   another worker took over is not recorded, since it would overlap theirs.
    func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) async throws
}
