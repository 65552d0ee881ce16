import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import SQLiteCache
import Synchronization
import Testing

/// The kinds of store the contract runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// Makes two stores of one kind over the same data, as two processes would open them; `nil`
/// (with one printed line) when this machine cannot run that kind.
func makeStores(_ kind: StoreKind, lease: TimeInterval = 30) async throws -> (any FeedStore, any FeedStore)? {
    switch kind {
    case .sqlite:
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString).sqlite").path
        let first = SQLiteFeedStore(path: path), second = SQLiteFeedStore(path: path)
        try await first.open()
        try await second.open()
        return (first, second)
    case .postgres:
        guard await PostgresServer.folder() != nil else { return nil }
        let url = try await PostgresServer.makeDatabase().url
        let first = PostgresFeedStore(conninfo: url, leasePeriod: lease), second = PostgresFeedStore(conninfo: url, leasePeriod: lease)
        try await first.open()
        try await second.open()
        return (first, second)
    }
}

func makePost(_ id: String, text: String = "hello", at seconds: Double = 1_700_000_000) -> Post {
    Post(id: PostID(id), author: User(id: "u1", handle: "ada", displayName: "Ada"), text: text,
         createdAt: Date(timeIntervalSince1970: seconds))
}

func makePage(_ changes: [FeedChange], cursor: String) -> FeedPage {
    FeedPage(changes: changes, nextCursor: FeedCursor(position: cursor), hasMore: false)
}

/// What every store promises, whatever engine is underneath.
@Suite struct StoreContractTests {
    @Test(arguments: StoreKind.allCases)
    func aPageCommitsPostsAndCursorAndRewritesOnlyWhatChanged(_ kind: StoreKind) async throws {
        guard let (store, _) = try await makeStores(kind) else { return }
        let first = try await store.apply(makePage([.upsert(makePost("p1")), .upsert(makePost("p2", at: 1_700_000_100))], cursor: "2"),
                                          videos: [], toFeed: "home")
        #expect(first.inserted == 2)
        #expect(try await store.cursor(ofFeed: "home") == FeedCursor(position: "2"))

        let second = try await store.apply(makePage([.upsert(makePost("p1")), .upsert(makePost("p2", text: "edited", at: 1_700_000_100)),
                                                     .delete("p3")], cursor: "3"), videos: [], toFeed: "home")
        #expect(second.inserted == 0 && second.updated == 1 && second.unchanged == 1 && second.deleted == 0)

        let posts = try await store.posts(matching: PostQuery(feed: "home"))
        #expect(posts.map(\.post.id) == ["p2", "p1"])
        #expect(posts.first?.post.text == "edited" && posts.first?.post.author.handle == "ada")
        #expect(try await store.feedStatuses().first?.postCount == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func aFullWalkFromAnyConnectionDeletesOnlyWhatItDidNotSee(_ kind: StoreKind) async throws {
        guard let (store, other) = try await makeStores(kind) else { return }
        let page = makePage(["p1", "p2", "p3"].map { .upsert(makePost($0)) }, cursor: "3")
        _ = try await store.apply(page, videos: [], toFeed: "home")
        var walk = FullWalk(feed: "home")
        walk.note(makePage([.upsert(makePost("p1"))], cursor: "1"))

        #expect(try await other.unseenPosts(of: walk) == (unseen: 2, cached: 3))
        #expect(try await other.deleteUnseenPosts(of: walk) == 2)
        #expect(try await store.posts(matching: PostQuery(feed: "home")).map(\.post.id) == ["p1"])
    }

    @Test(arguments: StoreKind.allCases)
    func aSessionBelongsToItsAccountAndEveryProcessReadsTheLatest(_ kind: StoreKind) async throws {
        guard let (store, other) = try await makeStores(kind) else { return }
        let ada = AccountKey(integration: "httpapi", server: "https://api.example", account: "ada")
        let bob = AccountKey(integration: "httpapi", server: "https://api.example", account: "bob")
        let first = Session(accessToken: Secret("a"), refreshToken: Secret("r"), expiresAt: Date(timeIntervalSince1970: 1_800_000_000))
        let second = Session(accessToken: Secret("a2"), refreshToken: nil, expiresAt: nil)
        try await store.saveSession(first, of: ada)
        #expect(try await other.session(of: ada) == first)
        #expect(try await other.session(of: bob) == nil)
        try await other.saveSession(second, of: ada)
        #expect(try await store.session(of: ada) == second)
    }

    @Test func aPostgreSQLStoreHandsEachFeedItsSessionFromBeforeAccountsOnce() async throws {
        guard let (any, _) = try await makeStores(.postgres), let store = any as? PostgresFeedStore else { return }
        try await store.run("keeping a session as an older version did", """
            INSERT INTO feedsync_private.sessions (feed, backend, access_token, refresh_token, expires_at)
            VALUES ('home', 'httpapi https://api.example user ada', 'OLD-ACCESS', 'OLD-REFRESH', 1900000000000),
                   ('news', 'httpapi https://api.example user bob', 'OLD-ACCESS-2', NULL, NULL)
            """)

        let home = try await store.takeFormerSession(ofFeed: "home", backend: "httpapi https://api.example user ada")
        let news = try await store.takeFormerSession(ofFeed: "news", backend: "httpapi https://api.example user ada")

        #expect(home == Session(accessToken: Secret("OLD-ACCESS"), refreshToken: Secret("OLD-REFRESH"),
                                expiresAt: Date(timeIntervalSince1970: 1_900_000_000)))
        #expect(news == nil, "another backend's session is not handed over")
        #expect(try await store.takeFormerSession(ofFeed: "home", backend: "httpapi https://api.example user ada") == nil)
        #expect(try await store.run("counting", "SELECT count(*) FROM feedsync_private.sessions").first?.first == "0")
    }

    @Test(arguments: StoreKind.allCases)
    func aSessionLockKeepsOtherProcessesOutUntilReleased(_ kind: StoreKind) async throws {
        guard let (store, other) = try await makeStores(kind) else { return }
        let ada = AccountKey(integration: "bluesky", server: "https://pds.example", account: "ada.example")
        let lock = try await store.lockSession(of: ada, wait: 0)
        let error = await #expect(throws: ServiceError.self) { _ = try await other.lockSession(of: ada, wait: 0.3) }
        #expect(error?.code == .locked)
        await store.unlockSession(lock)
        let taken = try await other.lockSession(of: ada, wait: 0)
        await other.unlockSession(taken)
    }

    @Test(arguments: StoreKind.allCases)
    func aSessionLockIsOneHolderAtATimeWithinAProcessToo(_ kind: StoreKind) async throws {
        guard let (store, _) = try await makeStores(kind) else { return }
        let ada = AccountKey(integration: "httpapi", server: "https://api.example", account: "ada")
        let bob = AccountKey(integration: "httpapi", server: "https://api.example", account: "bob")
        let lock = try await store.lockSession(of: ada, wait: 0)
        let bobs = try await store.lockSession(of: bob, wait: 0)
        let taken = Mutex(false)
        let second = Task {
            let held = try await store.lockSession(of: ada, wait: 0)
            taken.withLock { $0 = true }
            return held
        }
        // Held in this process: the second caller waits, however short its wait for other processes.
        try await Task.sleep(for: .milliseconds(300))
        #expect(!taken.withLock { $0 }, "a second holder of one account in one process")
        await store.unlockSession(lock)
        await store.unlockSession(try await second.value)
        #expect(taken.withLock { $0 })
        await store.unlockSession(bobs)
    }

    @Test(arguments: StoreKind.allCases)
    func aLeaseKeepsOtherProcessesOutUntilReleased(_ kind: StoreKind) async throws {
        guard let (store, other) = try await makeStores(kind) else { return }
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        let error = await #expect(throws: ServiceError.self) {
            _ = try await other.acquireLease(onFeed: "home", holder: "feedsync pull", wait: 0.3, onlyIfDue: false)
        }
        #expect(error?.code == .locked)
        await store.release(lease)
        let taken = try await other.acquireLease(onFeed: "home", holder: "feedsync pull", wait: 0, onlyIfDue: false)
        #expect(taken != nil)
        if let taken { await other.release(taken) }
    }

    @Test(arguments: StoreKind.allCases)
    func searchFindsAWordAndMarksIt(_ kind: StoreKind) async throws {
        guard let (store, _) = try await makeStores(kind) else { return }
        _ = try await store.apply(makePage([.upsert(makePost("p1", text: "orange marmalade on toast")), .upsert(makePost("p2"))], cursor: "2"),
                                  videos: [], toFeed: "home")
        let hits = try await store.search(SearchQuery(text: "marmalade"))
        #expect(hits.map(\.stored.post.id) == ["p1"])
        #expect(hits.first?.snippet.contains("\u{E000}marmalade\u{E001}") == true)
    }

    @Test(arguments: StoreKind.allCases)
    func aRenamedAuthorIsFoundUnderTheNewNameOnOlderPostsToo(_ kind: StoreKind) async throws {
        guard let (store, _) = try await makeStores(kind) else { return }
        _ = try await store.apply(makePage([.upsert(makePost("p1", text: "first"))], cursor: "1"), videos: [], toFeed: "home")
        var renamed = makePost("p2", text: "second", at: 1_700_000_500)
        renamed.author = User(id: "u1", handle: "lovelace", displayName: "Countess Lovelace")
        let page = try await store.apply(makePage([.upsert(renamed)], cursor: "2"), videos: [], toFeed: "home")
        #expect(page.inserted == 1)
        #expect(try await store.search(SearchQuery(text: "lovelace")).map(\.stored.post.id).sorted() == ["p1", "p2"])
        #expect(try await store.search(SearchQuery(text: "ada")).isEmpty, "the old handle and name are gone from every post")
        // An older page carrying the old profile does not bring it back.
        _ = try await store.apply(makePage([.upsert(makePost("p0", text: "zeroth", at: 1_600_000_000))], cursor: "3"),
                                  videos: [], toFeed: "home")
        #expect(try await store.posts(matching: PostQuery(feed: "home")).allSatisfy { $0.post.author.handle == "lovelace" })
    }

    @Test(arguments: StoreKind.allCases)
    func textWithNULsAndLineBreaksIsStoredWithoutFailingThePage(_ kind: StoreKind) async throws {
        guard let (store, _) = try await makeStores(kind) else { return }
        var post = makePost("p\u{0}1", text: "tab\there\nnew line \\ back\\u0000slash nul\u{0}end")
        post.author = User(id: "u\u{0}1", handle: "a\u{0}da", displayName: "Ada\r")
        post.labels = ["x\u{0}y"]
        let result = try await store.apply(makePage([.upsert(post)], cursor: "c\u{0}1"), videos: [], toFeed: "home")
        #expect(result.inserted == 1)
        let stored = try #require(try await store.posts(matching: PostQuery(feed: "home")).first?.post)
        // SQLite keeps a NUL; PostgreSQL text cannot hold one and keeps U+FFFD in its place.
        let nul = kind == .sqlite ? "\u{0}" : "\u{FFFD}"
        #expect(stored.text == "tab\there\nnew line \\ back\\u0000slash nul\(nul)end")
        #expect(stored.author.handle == "a\(nul)da" && stored.author.displayName == "Ada\r")
        #expect(stored.labels == ["x\(nul)y"])
    }

    @Test(arguments: StoreKind.allCases)
    func aDaemonIsListedWhileItRunsAndGoneWhenItLeaves(_ kind: StoreKind) async throws {
        guard let (store, other) = try await makeStores(kind) else { return }
        let daemon = try await store.join(startedAt: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(try await other.daemons().map(\.id) == [daemon.id])
        await store.leave(daemon)
        #expect(try await other.daemons().isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func readMarksSurviveResyncs(_ kind: StoreKind) async throws {
        guard let (store, _) = try await makeStores(kind) else { return }
        _ = try await store.apply(makePage([.upsert(makePost("p1"))], cursor: "1"), videos: [], toFeed: "home")
        #expect(try await store.setRead(true, postID: "p1", inFeed: nil) == ["home"])
        _ = try await store.apply(makePage([.upsert(makePost("p1", text: "edited"))], cursor: "2"), videos: [], toFeed: "home")
        #expect(try await store.posts(matching: PostQuery(unreadOnly: true)).isEmpty)
    }
}

/// What only a store several workers share promises.
@Suite struct PostgresLeaseTests {
    @Test func aLeaseOfAWorkerThatStoppedRenewingIsTakenOverAfterOnePeriod() async throws {
        guard let (store, other) = try await makeStores(.postgres, lease: 1), let dead = store as? PostgresFeedStore else { return }
        _ = try await dead.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false)
        await dead.close()   // as a killed worker: no renewal, no release
        // close() gives leases back; hold one again without renewal to play the dead worker.
        try await dead.open()
        _ = try await dead.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false)
        await dead.stopRenewingForTests()
        let started = Date()
        let lease = try await other.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 15, onlyIfDue: false)
        #expect(lease?.tookOverFrom?.contains("feedsyncd") == true)
        // About one lease period (1 s) on a quiet machine; the bound leaves room for a loaded one (the
        // chaos test measures takeovers against the lease's recorded expiry).
        #expect(Date().timeIntervalSince(started) < 10, "taken over soon after the lease (1 s) ran out")
        let error = await #expect(throws: ServiceError.self) {
            _ = try await dead.apply(makePage([.upsert(makePost("late"))], cursor: "9"), videos: [], toFeed: "home")
        }
        #expect(error?.code == .locked, "the worker that lost its lease commits nothing more")
    }

    /// A renewal that comes too late (the worker stalled past its lease) finds the lease taken
    /// over; the worker's next commit must still meet the fence, not find no lease to check.
    @Test func aWorkerWhoseLateRenewalFoundItsLeaseGoneCommitsNothing() async throws {
        guard let (store, other) = try await makeStores(.postgres, lease: 1), let late = store as? PostgresFeedStore else { return }
        _ = try await late.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false)
        await late.stopRenewingForTests()
        let taken = try await other.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 15, onlyIfDue: false)
        #expect(taken?.tookOverFrom != nil)
        await late.renewLeases()
        let error = await #expect(throws: ServiceError.self) {
            _ = try await late.apply(makePage([.upsert(makePost("late"))], cursor: "9"), videos: [], toFeed: "home")
        }
        #expect(error?.code == .locked)
        let record = await #expect(throws: ServiceError.self) {
            try await late.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home")), ofFeed: "home")
        }
        #expect(record?.code == .locked, "nor records a run that would overlap the new holder's")
    }

    @Test func aDroppedConnectionIsRemadeForTheNextOperation() async throws {
        guard await PostgresServer.folder() != nil else { return }
        let database = try await PostgresServer.makeDatabase()
        let store = PostgresFeedStore(conninfo: database.url)
        try await store.open()
        _ = try await store.apply(makePage([.upsert(makePost("p1"))], cursor: "1"), videos: [], toFeed: "home")
        // The server ends the store's session, as a restart or a failover would.
        try await database.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        _ = try? await store.cursor(ofFeed: "home")   // may fail: the connection was dropped under it
        #expect(try await store.cursor(ofFeed: "home") == FeedCursor(position: "1"))
        // The new session has the store's settings, and pages commit on it.
        _ = try await store.apply(makePage([.upsert(makePost("p2"))], cursor: "2"), videos: [], toFeed: "home")
        #expect(try await store.cursor(ofFeed: "home") == FeedCursor(position: "2"))
    }
}
