import Dispatch

/// Runs an actor's jobs on a dispatch queue of its own.
///
/// SQLite calls block: the busy timeout waits out another process's write lock (up to 5 s),
/// retries sleep, and a commit may `fsync`. On the few threads that run every task of the
/// process, that would stall the syncs, the heartbeat and signal handling with it; on this
/// queue it stalls only the store. (The PostgreSQL store has the same executor for libpq.)
final class DatabaseExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}
