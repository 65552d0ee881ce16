import Dispatch
import Foundation
import Synchronization

/// Threads for work that blocks (a libcurl transfer), each kept a while after its work for the
/// next: never Swift's cooperative pool, which blocking would starve.
///
/// A thread of its own for each transfer cost a clone, a fresh stack and an exit per request:
/// 507 threads for a walk of 20,000 Mastodon statuses, one per page. Here a finished thread
/// waits up to ``idleLifetime`` (5 s) to be handed the next piece of work, and ends after it.
/// There is no queue and no bound: work that finds no idle thread starts one, so transfers run
/// as concurrently as they did with a thread each, and none waits for another to end.
final class TransferThreads: Sendable {
    /// The threads of the process: transfers of every pool share them.
    static let shared = TransferThreads(idleLifetime: .seconds(5))

    /// How long a thread with nothing to do waits for work before it ends.
    let idleLifetime: DispatchTimeInterval

    init(idleLifetime: DispatchTimeInterval) {
        self.idleLifetime = idleLifetime
    }

    /// A thread waiting for work, and the work it is handed.
    ///
    /// `@unchecked Sendable`: ``work`` is written once, by the one ``run(_:)`` that took this
    /// thread out of ``idle`` (under its lock, so no other can), before it signals ``wake``, and
    /// read by the thread only after its wait on ``wake`` returned: the semaphore orders the two.
    private final class Waiting: @unchecked Sendable {
        let wake = DispatchSemaphore(value: 0)
        var work: (@Sendable () -> Void)?
    }

    /// The idle threads, the most recently idle last (taken first, so the oldest ones time out).
    private let idle = Mutex<[Waiting]>([])

    /// How many threads wait for work now.
    var idleCount: Int { idle.withLock { $0.count } }

    /// Runs `work` on an idle thread, or on a new one when none is idle.
    func run(_ work: @escaping @Sendable () -> Void) {
        if let waiting = idle.withLock({ $0.popLast() }) {
            waiting.work = work
            waiting.wake.signal()
        } else {
            Thread.detachNewThread { [self] in serve(first: work) }
        }
    }

    /// A thread's life: its first work, then each handed to it, until it waits in vain.
    private func serve(first: @escaping @Sendable () -> Void) {
        var work: (@Sendable () -> Void)? = first
        while let next = work {
            next()
            work = nil
            let waiting = Waiting()
            idle.withLock { $0.append(waiting) }
            if waiting.wake.wait(timeout: .now() + idleLifetime) == .timedOut {
                // Still idle: no one can hand it work any more. Else a run(_:) took it out of the
                // list as the wait ended, and its signal is on the way.
                let left = idle.withLock { threads in
                    threads.firstIndex { $0 === waiting }.map { threads.remove(at: $0) } != nil
                }
                if left { return }
                waiting.wake.wait()
            }
            work = waiting.work
        }
    }
}
