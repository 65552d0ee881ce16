import Foundation

/// Keeps each account's login session between runs.
///
/// A session belongs to an account (``AccountKey``), so every feed of one account shares it.
/// Sessions hold tokens: a store keeps them apart from the mirror it lets others read.
public protocol SessionKeeper: Sendable {
    /// The session saved for `account`, if any.
    func session(of account: AccountKey) async throws -> Session?

    /// Saves `account`'s session, so the other feeds of the account and the next run use it.
    ///
    /// - Important: Costs the same however many accounts the store keeps.
    func saveSession(_ session: Session, of account: AccountKey) async throws

    /// The session a feed kept before sessions belonged to accounts (an older version's, kept
    /// through the upgrade), if the backend that issued it is `backend`. It is removed as it is
    /// taken, whatever its backend; the caller saves it for the account if the account has none.
    ///
    /// - Important: Asked at every sync of a feed with a login, so it costs next to nothing once
    ///   no former session is left.
    func takeFormerSession(ofFeed feed: String, backend: String) async throws -> Session?

    /// Takes `account`'s session lock: one holder at a time, among every caller in this process
    /// (``AccountLocks``) and every process that uses this store, so that one renewal of the
    /// account's session runs at a time: it re-reads the stored session under the lock, and a
    /// refresh token is never spent twice.
    ///
    /// - Parameter wait: how long to wait for another process to let go (a holder in this
    ///   process is waited for as long as it holds the lock).
    /// - Throws: ``ServiceError`` `.locked` when the wait runs out.
    func lockSession(of account: AccountKey, wait: TimeInterval) async throws -> SessionLock

    /// Gives the lock back.
    func unlockSession(_ lock: SessionLock) async
}

/// A held session lock on one account.
public struct SessionLock: Sendable, Hashable {
    public var account: AccountKey

    public init(account: AccountKey) {
        self.account = account
    }
}
