import Core
import Foundation

/// Sessions: one per account, in ``SessionDatabase`` beside the store, renewed under the
/// store's write lock.
extension SQLiteFeedStore {
    public func session(of account: AccountKey) throws -> Session? {
        try accountSessions.session(of: account)
    }

    public func saveSession(_ session: Session, of account: AccountKey) throws {
        try accountSessions.save(session, of: account)
    }

    public func takeFormerSession(ofFeed feed: String, backend: String) throws -> Session? {
        try accountSessions.takeFormerSession(ofFeed: feed, backend: backend)
    }

    /// Takes the account's lock in this process (``AccountLocks``), then a hold on the store's
    /// write lock, the lock every feed's lease is: a sync already holds that, so it costs nothing
    /// then; another process that syncs waits its turn.
    public func lockSession(of account: AccountKey, wait: TimeInterval) async throws -> SessionLock {
        try await sessionLocks.lock(account)
        let deadline = Date().addingTimeInterval(wait)
        do {
            while true {
                switch try lock.tryAcquire(holder: "feedsync (renewing a session)") {
                case .held:
                    return SessionLock(account: account)
                case .busy(let holder):
                    guard Date() < deadline else {
                        throw ServiceError(.locked, "waiting for the store's write lock \(lock.path) to renew the session of \(account)",
                                           "\(holder ?? "another process") holds it; gave up after \(Int(wait)) s")
                    }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        } catch {
            sessionLocks.unlock(account)
            throw error
        }
    }

    public func unlockSession(_ held: SessionLock) {
        lock.release()
        sessionLocks.unlock(held.account)
    }
}
