import Synchronization

/// A service's request to wind down, in the shape of swift-service-lifecycle's graceful
/// shutdown: set once by the ``ServiceGroup``, awaited by the service.
///
/// Any other moment that comes once and that tasks wait for has the same shape, and the
/// scheduler uses it so: ``Scheduler/reloaded`` is requested when the next config takes over.
///
///     await shutdown.requested()                       // returns once asked (or cancelled)
///     if await shutdown.requested(within: .seconds(5)) { break }   // a sleep that a stop ends early
final class GracefulShutdown: Sendable {
    private struct State {
        var isRequested = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Whether the shutdown has been requested.
    var isRequested: Bool { state.withLock { $0.isRequested } }

    /// Asks the service to wind down; wakes everyone waiting. Asking twice changes nothing.
    func request() {
        let waiters = state.withLock { state in
            state.isRequested = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Returns once the shutdown is requested, or at once when the task is cancelled.
    func requested() async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.isRequested || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Sleeps `duration`, or less when the shutdown is requested meanwhile.
    ///
    /// - Returns: whether the shutdown was requested (or the task cancelled).
    func requested(within duration: Duration) async -> Bool {
        await requested(before: {
            do { try await Task.sleep(for: duration) } catch { return true }
            return false
        })
    }

    /// Waits for the shutdown or for `other`, whichever comes first: a service with nothing to
    /// do until the config changes waits so, with no timer (``Scheduler/reloaded``).
    ///
    /// - Returns: whether the shutdown was requested (or the task cancelled).
    func requested(orUntil other: GracefulShutdown) async -> Bool {
        await requested(before: {
            await other.requested()
            return Task.isCancelled
        })
    }

    /// Waits for the shutdown and for `wait` side by side, until the first of the two ends.
    ///
    /// - Parameter wait: returns whether it ended because the task was cancelled.
    /// - Returns: whether the shutdown was requested (or the task cancelled).
    private func requested(before wait: @escaping @Sendable () async -> Bool) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask(operation: wait)
            group.addTask {
                await self.requested()
                return true
            }
            let first = await group.next() ?? true
            group.cancelAll()
            return first || isRequested
        }
    }
}
