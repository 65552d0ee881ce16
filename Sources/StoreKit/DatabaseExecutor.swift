import Dispatch

/// Runs an actor's jobs on a dispatch queue of its own.
///
/// A database call blocks: SQLite's busy timeout waits out another process's write lock (up
/// to 5 s), retries sleep and a commit may `fsync`; libpq waits until the server answers. On
/// the few threads that run every task of the process, that would stall the syncs, the
/// heartbeat and signal handling with it; on this queue it stalls only the store.
///
/// ```swift
/// private let executor = DatabaseExecutor(label: "feedsync.sqlite")
/// public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// ```
public final class DatabaseExecutor: SerialExecutor {
    private let queue: DispatchQueue

    /// - Parameter label: the queue's name, as a debugger shows it.
    public init(label: String) { queue = DispatchQueue(label: label) }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}
