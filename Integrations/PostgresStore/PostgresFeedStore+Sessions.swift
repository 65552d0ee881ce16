import Core
import Foundation
import StoreKit

/// Sessions: one per account, in `feedsync_private.account_sessions`, renewed under a
/// session-level advisory lock on the account.
extension PostgresFeedStore: SessionKeeper {
    public func session(of account: AccountKey) throws -> Session? {
        try query("reading the session of \(account)", Self.sql.session(of: account, in: Self.sessionTable)).first
    }

    public func saveSession(_ session: Session, of account: AccountKey) throws {
        try run("saving the session of \(account)", Self.sql.saveSession(session, of: account, in: Self.sessionTable))
    }

    private static let sessionTable = "feedsync_private.account_sessions"

    /// Takes the feed's row of the per-feed table older versions kept; once that table is found
    /// empty, no feed asks the server again.
    public func takeFormerSession(ofFeed feed: String, backend: String) throws -> Session? {
        guard formerSessionsLeft else { return nil }
        let rows = try run("reading the former session of feed \(feed)", """
            DELETE FROM feedsync_private.sessions WHERE feed = $1 RETURNING access_token, refresh_token, expires_at, backend
            """, [feed])
        guard let row = rows.first else {
            formerSessionsLeft = try run("reading the former sessions", "SELECT EXISTS (SELECT 1 FROM feedsync_private.sessions)").first?.first == "t"
            return nil
        }
        return row.count == 4 && row[3] == backend
            ? Session(accessToken: Secret(row[0] ?? ""), refreshToken: row[1].map { Secret($0) },
                      expiresAt: row[2].flatMap { Int64($0) }.map(StoredTime.date))
            : nil
    }

    /// Takes the account's lock in this process (``AccountLocks``: an advisory lock is
    /// re-entrant on one connection), then a session-level advisory lock on the account: the
    /// server frees it if this process dies, and it holds no transaction open while the session
    /// is renewed.
    public func lockSession(of account: AccountKey, wait: TimeInterval) async throws -> SessionLock {
        try await sessionLocks.lock(account)
        let deadline = Date().addingTimeInterval(wait)
        do {
            while true {
                let row = try run("locking the session of \(account)", "SELECT pg_try_advisory_lock(\(Self.sessionLockClass), hashtext($1))",
                                  ["\(account.integration) \(account.server) \(account.account)"]).first
                if row?.first == "t" { return SessionLock(account: account) }
                guard Date() < deadline else {
                    throw ServiceError(.locked, "waiting for the lock on the session of \(account)",
                                       "another process is renewing it; gave up after \(Int(wait)) s")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        } catch {
            sessionLocks.unlock(account)
            throw error
        }
    }

    public func unlockSession(_ lock: SessionLock) {
        let account = lock.account
        _ = try? run("unlocking the session of \(account)", "SELECT pg_advisory_unlock(\(Self.sessionLockClass), hashtext($1))",
                     ["\(account.integration) \(account.server) \(account.account)"])
        sessionLocks.unlock(account)
    }

    /// The first key of every session lock (two-key advisory locks never meet the one-key
    /// lock the migrations take): "fsse" as a number.
    static let sessionLockClass = 1_718_842_213
}
