import Dispatch

/// Runs an actor's jobs on a dispatch queue of its own.
///
/// libpq calls block until the server answers. On the few threads that run every task of the
/// process, a slow or unreachable server would stall the syncs, the heartbeat and signal handling
/// with it; on this queue it stalls only the store.
final class DatabaseExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}
