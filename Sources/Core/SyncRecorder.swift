/// The store's role that keeps each feed's run records, for `feedsync status` and the schedule.
public protocol SyncRecorder: Sendable {
    /// Records how a sync run ended, counting consecutive failures (a success resets them), and
    /// on a success the report's ``PollingHint`` location and stop reason (cleared when absent).
    /// - Throws: ``ServiceError`` `.locked` when the run's `lease` was lost meanwhile: a run
    ///   another worker took over is not recorded, since it would overlap theirs.
    func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) async throws
}

/// A store that records how a sync ended and gives its lease back in one transaction: a round
/// trip fewer per sync on a store across the network (issue 40). The sync engine uses it where
/// a store offers it, else ``SyncRecorder/recordSync(_:under:)`` and then ``FeedLeases/release(_:)``.
public protocol RecordingRelease: Sendable {
    /// Records `outcome` as ``SyncRecorder/recordSync(_:under:)`` does and gives `lease` back as
    /// ``FeedLeases/release(_:)`` does. The lease is given back whether or not the record is kept.
    ///
    /// - Throws: as ``SyncRecorder/recordSync(_:under:)``: `.locked` when the lease was lost
    ///   meanwhile (nothing is recorded).
    func recordSync(_ outcome: SyncOutcome, releasing lease: FeedLease) async throws
}
