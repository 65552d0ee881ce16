/// The store's role that keeps each feed's run records, for `feedsync status` and the schedule.
public protocol SyncRecorder: Sendable {
    /// Records how a sync run ended, counting consecutive failures (a success resets them), and
    /// on a success the report's ``PollingHint`` location and stop reason (cleared when absent).
    func recordSync(_ outcome: SyncOutcome, ofFeed feed: String) async throws
}
