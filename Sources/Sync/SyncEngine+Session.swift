import Core
import Foundation

/// Session renewal: the account's stored session while it is good, else one refresh or login
/// at a time per account, under the store's session lock.
extension SyncEngine {
    /// The account whose session the feed uses; without one named, the feed's own.
    var account: AccountKey {
        services.account ?? AccountKey(integration: "feed", server: services.backend, account: feed)
    }

    /// The account's stored session when it is still good, else a renewed one; `nil` for a
    /// backend without a login.
    func currentSession() async throws -> Session? {
        guard services.authentication != nil else { return nil }
        // The feed's own session from before sessions belonged to accounts, taken at its first
        // sync: it becomes the account's if the account has none yet.
        let former = try await services.store.takeFormerSession(ofFeed: feed, backend: services.backend)
        let stored = try await services.store.session(of: account)
        if let stored, stored.isUsable(at: now(), margin: options.refreshMargin) { return stored }
        return try await renew(stored, logInAgain: false, former: former)
    }

    /// A good session for the account in place of `seen` (spent, rejected, or none): refreshed
    /// (falling back to a login when the refresh is refused), or, with `logInAgain`, from a new
    /// login.
    ///
    /// Renewals of one account take turns under the store's session lock (in this process and
    /// between processes), and each first reads the stored session again: one that another feed
    /// or process renewed meanwhile is used as it is. So N feeds of an account log in once, and a
    /// refresh token that rotates is never spent twice.
    ///
    /// - Important: A wait inside a renewal keeps the daemon's concurrency slot (``sleepRenewing``).
    ///   Feeds queued on the account's lock hold slots; a renewal that gave its slot back to wait
    ///   might find them all taken by those feeds when it wanted it again, and wait forever.
    func renew(_ seen: Session?, logInAgain: Bool, former: Session? = nil) async throws -> Session {
        let lock = try await services.store.lockSession(of: account, wait: options.lockWait)
        do {
            let fresh = try await renewHoldingLock(seen, logInAgain: logInAgain, former: former)
            await services.store.unlockSession(lock)
            return fresh
        } catch {
            await services.store.unlockSession(lock)
            throw error
        }
    }

    private func renewHoldingLock(_ seen: Session?, logInAgain: Bool, former: Session?) async throws -> Session {
        guard let authentication = services.authentication else {
            throw ServiceError(.unauthorized, "renewing the session of feed \(feed)", "its backend has no login")
        }
        var stored = try await services.store.session(of: account)
        let adopted = stored == nil && former != nil
        if adopted { stored = former }
        if let stored, stored != seen, stored.isUsable(at: now(), margin: options.refreshMargin) {
            if adopted { try await services.store.saveSession(stored, of: account) }
            return stored
        }
        // The same retries, waiting with ``sleepRenewing``.
        let holding = SyncEngine(feed: feed, services: services, options: options, now: now, sleep: sleepRenewing, sleepRenewing: sleepRenewing)
        var renewed: Session?
        if let stored, stored.refreshToken != nil, !(logInAgain && stored == seen) {
            do {
                renewed = try await holding.withRetries { try await authentication.refresh(stored) }
            } catch let error as ServiceError where error.code == .unauthorized {
                renewed = nil
            }
        }
        let fresh: Session
        if let renewed {
            fresh = renewed
        } else {
            fresh = try await holding.withRetries { try await authentication.logIn() }
        }
        try await services.store.saveSession(fresh, of: account)
        return fresh
    }
}
