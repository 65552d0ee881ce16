import Synchronization

/// One holder at a time per account, within a process: a lock table keyed by ``AccountKey``,
/// for renewing an account's session once however many feeds find it spent.
///
/// A store keeps one and takes it in ``SessionKeeper/lockSession(of:wait:)`` before its lock
/// between processes, so the feeds of an account in this process queue here, and each one after
/// the first finds the session the first one saved. It lives as long as the store, so a daemon
/// that reloads its config (and shares its store) never renews one account twice at once.
///
///     try await locks.lock(account)
///     defer { locks.unlock(account) }
///
/// Waiters are served in order of arrival; a cancelled waiter leaves the queue at once.
public final class AccountLocks: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var held: Set<AccountKey> = []
        var waiters: [AccountKey: [Waiter]] = [:]
        var lastID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Runs `body` holding `account`'s lock.
    ///
    /// - Throws: what `body` throws, or `CancellationError` when cancelled while waiting.
    public func withLock<T>(_ account: AccountKey, _ body: () async throws -> T) async throws -> T {
        try await lock(account)
        do {
            let result = try await body()
            unlock(account)
            return result
        } catch {
            unlock(account)
            throw error
        }
    }

    /// Waits until `account`'s lock is free and takes it.
    ///
    /// - Throws: `CancellationError` when cancelled while waiting; the lock is then not held.
    public func lock(_ account: AccountKey) async throws {
        try await acquire(account)
    }

    /// Gives `account`'s lock to the next waiter, or frees it. Call it once per ``lock(_:)``.
    public func unlock(_ account: AccountKey) {
        release(account)
    }

    private func acquire(_ account: AccountKey) async throws {
        let id: UInt64? = state.withLock { state in
            guard !state.held.insert(account).inserted else { return nil }
            state.lastID += 1
            return state.lastID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Under the mutex, so a cancellation either comes before (and is seen here) or
                // after (and finds the waiter in the queue), and a release either comes before
                // (and the lock is free here) or after (and hands it to this waiter).
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    guard !Task.isCancelled else { return .failure(CancellationError()) }
                    guard !state.held.insert(account).inserted else { return .success(()) }
                    state.waiters[account, default: []].append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters[account]?.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters[account]?.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Hands the lock to the first waiter, or frees it.
    private func release(_ account: AccountKey) {
        let next = state.withLock { state -> Waiter? in
            // In place: a copy of the queue per release would cost as much as the queue is long.
            guard state.waiters[account]?.isEmpty == false else {
                state.held.remove(account)
                return nil
            }
            let next = state.waiters[account]!.removeFirst()
            if state.waiters[account]!.isEmpty { state.waiters[account] = nil }
            return next
        }
        next?.continuation.resume()
    }
}
