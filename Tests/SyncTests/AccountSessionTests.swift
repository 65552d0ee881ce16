import Core
import Foundation
import Synchronization
import Sync
import Testing

/// Sessions belong to accounts: the feeds of one account share one login and one refresh,
/// and a refresh token that rotates is never spent twice.
@Suite struct AccountSessionTests {
    let log = CallLog()
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let account = AccountKey(integration: "httpapi", server: "https://api.example", account: "ada")

    /// A backend whose refresh tokens rotate: each works once, as the reference API's do.
    final class RotatingAuthentication: AuthenticationService {
        struct State {
            var logIns = 0
            var refreshes = 0
            var spentTokenUses = 0
            var issued = 0
            var validRefreshToken: String?
        }
        let state = Mutex(State())
        let expiresAt: Date

        init(expiresAt: Date, validRefreshToken: String? = nil) {
            self.expiresAt = expiresAt
            state.withLock { $0.validRefreshToken = validRefreshToken }
        }

        func logIn() async throws -> Session {
            // Gives way a few times, so other feeds run while this login is on the wire.
            for _ in 0..<20 { await Task.yield() }
            return state.withLock { state in
                state.logIns += 1
                return issue(&state)
            }
        }

        func refresh(_ session: Session) async throws -> Session {
            for _ in 0..<20 { await Task.yield() }
            return try state.withLock { state in
                guard session.refreshToken?.revealed == state.validRefreshToken else {
                    state.spentTokenUses += 1
                    throw ServiceError(.unauthorized, "refreshing", "already used refresh token")
                }
                state.refreshes += 1
                return issue(&state)
            }
        }

        private func issue(_ state: inout State) -> Session {
            state.issued += 1
            state.validRefreshToken = "r\(state.issued)"
            return Session(accessToken: Secret("a\(state.issued)"), refreshToken: Secret("r\(state.issued)"), expiresAt: expiresAt)
        }
    }

    /// Serves one last page; `onFirstCall` may answer the first call instead.
    final class OnePagePosts: PostService {
        let tokens = Mutex<[String]>([])
        let onFirstCall: (@Sendable (Session?) async throws -> Void)?

        init(onFirstCall: (@Sendable (Session?) async throws -> Void)? = nil) { self.onFirstCall = onFirstCall }

        func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage {
            let first = tokens.withLock { tokens in
                tokens.append(session?.accessToken.revealed ?? "(none)")
                return tokens.count == 1
            }
            if first, let onFirstCall { try await onFirstCall(session) }
            return makePage([makePost("p1")], cursor: "1", hasMore: false)
        }
    }

    func makeEngine(feed: String, auth: any AuthenticationService, posts: any PostService, store: MockStore) -> SyncEngine {
        let services = SyncEngine.Services(authentication: auth, posts: posts, videos: MockVideos(log: log), store: store,
                                           requests: RequestCounter(), backend: "httpapi \(feed)", account: account)
        let now = self.now
        return SyncEngine(feed: feed, services: services, now: { now }, sleep: { _ in })
    }

    /// Runs `count` feeds of the account at once and returns the token each one's page was read with.
    func syncFeeds(_ count: Int, auth: RotatingAuthentication, store: MockStore) async throws -> [String] {
        try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<count {
                let posts = OnePagePosts()
                let engine = makeEngine(feed: "f\(index)", auth: auth, posts: posts, store: store)
                group.addTask {
                    _ = try await engine.run()
                    return posts.tokens.withLock { $0.joined(separator: ",") }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func fiftyFeedsOfOneAccountLogInOnceAndShareTheSession() async throws {
        let auth = RotatingAuthentication(expiresAt: now + 3600)
        let store = MockStore(log: log)

        let tokens = try await syncFeeds(50, auth: auth, store: store)

        #expect(auth.state.withLock { $0.logIns } == 1)
        #expect(Set(tokens) == ["a1"], "every feed reads with the one session")
        #expect(await store.sessions == [account: Session(accessToken: Secret("a1"), refreshToken: Secret("r1"), expiresAt: now + 3600)])
    }

    @Test func aSpentSessionIsRefreshedOnceForEveryFeedAndNoRefreshTokenIsSpentTwice() async throws {
        let auth = RotatingAuthentication(expiresAt: now + 3600, validRefreshToken: "r0")
        let store = MockStore(log: log)
        await store.setSession(Session(accessToken: Secret("a0"), refreshToken: Secret("r0"), expiresAt: now + 10), of: account)

        let tokens = try await syncFeeds(30, auth: auth, store: store)

        let state = auth.state.withLock { $0 }
        #expect(state.refreshes == 1 && state.logIns == 0 && state.spentTokenUses == 0)
        #expect(Set(tokens) == ["a1"])
    }

    @Test func aFeedWhoseTokenIsRejectedPicksUpTheSessionAnotherFeedRenewed() async throws {
        let auth = RotatingAuthentication(expiresAt: now + 3600, validRefreshToken: "r0")
        let store = MockStore(log: log)
        let account = self.account
        await store.setSession(Session(accessToken: Secret("a0"), refreshToken: Secret("r0"), expiresAt: now + 3600), of: account)
        let renewedElsewhere = Session(accessToken: Secret("b1"), refreshToken: Secret("rb1"), expiresAt: now + 3600)
        // While the first page is on the wire another feed renews the session; the server then
        // refuses the old access token.
        let posts = OnePagePosts { session in
            await store.setSession(renewedElsewhere, of: account)
            throw ServiceError(.unauthorized, "reading the feed", "token \(session?.accessToken.revealed ?? "") expired")
        }

        _ = try await makeEngine(feed: "late", auth: auth, posts: posts, store: store).run()

        #expect(posts.tokens.withLock { $0 } == ["a0", "b1"])
        let state = auth.state.withLock { $0 }
        #expect(state.refreshes == 0 && state.logIns == 0, "the stored session is used, not refreshed again")
    }

    @Test func aFeedKeepsTheSessionAnOlderVersionSavedForIt() async throws {
        let auth = RotatingAuthentication(expiresAt: now + 3600)
        let store = MockStore(log: log)
        let kept = Session(accessToken: Secret("kept"), refreshToken: Secret("rk"), expiresAt: now + 3600)
        await store.keepFormerSession(kept, ofFeed: "f0", backend: "httpapi f0")
        await store.keepFormerSession(Session(accessToken: Secret("kept-too")), ofFeed: "f2", backend: "httpapi f2")

        let first = try await syncFeeds(1, auth: auth, store: store)
        let then = try await syncFeeds(3, auth: auth, store: store)

        #expect(auth.state.withLock { $0.logIns } == 0)
        #expect(Set(first + then) == ["kept"])
        #expect(await store.sessions[account] == kept)
        #expect(await store.formerSessions.isEmpty, "each feed's former session is taken at its first sync, used or not")
    }

    @Test func aWaiterCancelledInTheQueueLeavesItAndTheLockStillWorks() async throws {
        let locks = AccountLocks()
        let account = self.account
        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await locks.withLock(account) {
                enteredContinuation.yield()
                for await _ in release { break }
            }
        }
        for await _ in entered { break }
        let waiter = Task { try await locks.withLock(account) { "ran" } }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        releaseContinuation.yield()
        try await holder.value
        #expect(try await locks.withLock(account) { "free" } == "free")
    }
}

@Suite struct RenewalWaitTests {
    /// Fails its first `failures` logins as unavailable, then logs in.
    final class FlakyLogin: AuthenticationService {
        let failuresLeft: Mutex<Int>
        init(failures: Int) { failuresLeft = Mutex(failures) }
        func logIn() async throws -> Session {
            let fail = failuresLeft.withLock { left in
                defer { left -= 1 }
                return left > 0
            }
            if fail { throw ServiceError(.unavailable, "logging in", "503") }
            return Session(accessToken: Secret("ok"))
        }
        func refresh(_ session: Session) async throws -> Session { try await logIn() }
    }

    @Test func aRenewalWaitsHoldingItsSlotSoFeedsQueuedOnTheAccountCannotStarveIt() async throws {
        let log = CallLog()
        let posts = MockPosts(log: log, [.success(makePage([], cursor: "1", hasMore: false))])
        let services = SyncEngine.Services(authentication: FlakyLogin(failures: 2), posts: posts, videos: MockVideos(log: log),
                                           store: MockStore(log: log), requests: RequestCounter())
        let slotReleasingSleeps = SleepRecorder(), renewalSleeps = SleepRecorder()
        let engine = SyncEngine(feed: "home", services: services, sleep: { slotReleasingSleeps.record($0) },
                                sleepRenewing: { renewalSleeps.record($0) })

        _ = try await engine.run()

        #expect(slotReleasingSleeps.waits.isEmpty, "a wait under the account's lock gave the daemon's slot back")
        #expect(renewalSleeps.waits.count == 2)
        #expect(posts.tokens.withLock { $0 } == ["ok"])
    }
}
