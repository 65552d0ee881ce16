import Core
import Foundation
import Synchronization
import Sync
import Testing

@Suite struct BoundedFullSyncTests {
    @Test func aFullWalkOfABackendThatForgetsDeletesNothing() async throws {
        let log = CallLog()
        let store = MockStore(log: log)
        _ = try await store.apply(makePage(["p1", "p2", "p3"].map { makePost($0) }, cursor: "0", hasMore: false), videos: [],
                                  under: FeedLease(feed: "home", token: "test"))
        var last = makePage([makePost("p3")], cursor: "3", hasMore: false)
        last.missingMeansDeleted = false
        let services = SyncEngine.Services(authentication: MockAuthentication(log: log), posts: MockPosts(log: log, [.success(last)]),
                                           videos: MockVideos(log: log), store: store, requests: RequestCounter())

        let report = try await SyncEngine(feed: "home", services: services, sleep: { _ in }).run(full: true)

        #expect(report.deletedPosts == 0)
        #expect(await store.posts.count == 3)
        #expect(!log.all.contains("deleteUnseenPosts"))
    }
}

/// Backends without a login, backend swaps, and pages that go in circles.
@Suite struct SyncEngineEdgeTests {
    let log = CallLog()

    func makeEngine(authenticated: Bool, posts: MockPosts, store: MockStore, backend: String = "b1") -> SyncEngine {
        let services = SyncEngine.Services(authentication: authenticated ? MockAuthentication(log: log) : nil, posts: posts,
                                           videos: MockVideos(log: log), store: store, requests: RequestCounter(), backend: backend)
        return SyncEngine(feed: "home", services: services, sleep: { _ in })
    }

    @Test func aBackendWithoutALoginIsReadWithNoSessionAndNeverLogsIn() async throws {
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1")], cursor: "1", hasMore: false))])
        let store = MockStore(log: log)

        let report = try await makeEngine(authenticated: false, posts: posts, store: store).run()

        #expect(report.newPosts == 1)
        #expect(posts.tokens.withLock { $0 } == ["(no session)"])
        #expect(log.count("logIn") == 0 && log.count("saveSession") == 0)
    }

    @Test func aChangedBackendWalksFromTheStartAndReplacesTheOldMirror() async throws {
        let posts = MockPosts(log: log, [.success(makePage([makePost("new")], cursor: "1", hasMore: false))])
        let store = MockStore(log: log, cursor: FeedCursor(position: "old-cursor", validator: "\"etag\""), session: makeSession("old"))
        await store.seed(posts: [makePost("old-1")], backend: "old backend")

        let report = try await makeEngine(authenticated: true, posts: posts, store: store, backend: "new backend").run()

        #expect(log.all.contains("page(after: start)"), "the old cursor is not reused")
        #expect(log.count("logIn") == 1, "the old backend's session is not reused")
        #expect(report.deletedPosts == 1 && report.newPosts == 1)
        #expect(await store.storedBackend == "new backend")
    }

    @Test func aSwapKeepsAPostTheNewBackendListsButSkipped() async throws {
        var page = makePage([makePost("new")], cursor: "1", hasMore: false)
        page.skipped = [SkippedItem(id: "kept", reason: "it cannot be read", postID: "kept")]
        let posts = MockPosts(log: log, [.success(page)])
        let store = MockStore(log: log, cursor: FeedCursor(position: "old-cursor"), session: makeSession("old"))
        await store.seed(posts: [makePost("old-1"), makePost("kept")], backend: "old backend")

        let report = try await makeEngine(authenticated: true, posts: posts, store: store, backend: "new backend").run()

        #expect(report.deletedPosts == 1)
        #expect(await store.posts.keys.sorted() == ["kept", "new"])
    }

    /// Also when pages commit together: the commit after page 1 is held until the fetching side
    /// has met the cursor again, and stopped there (page 3 goes back to page 1's cursor): no page
    /// after it is fetched, and none after it is kept.
    @Test(arguments: [1, 8]) func aCursorMetTwiceStopsTheSyncAndNoFetchOutlivesIt(pagesPerTransaction: Int) async throws {
        let pages = (0..<50).map { index in
            Result<FeedPage, ServiceError>.success(makePage([makePost("p\(index)")], cursor: index < 2 ? "c\(index)" : "c0", hasMore: true))
        }
        let log = self.log
        let seen = FetchesSeen()
        let posts = MockPosts(log: log, pages, beforeAnswer: seen.firstCommitAlone)
        let store = MockStore(log: log, pagesPerTransaction: pagesPerTransaction, beforeCommit: { number in
            seen.commitsBegun.withLock { $0 += 1 }
            let deadline = ContinuousClock.now + .seconds(600)
            while number == 1 && log.count("page") < 3 && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        })

        let error = await #expect(throws: ServiceError.self) { try await makeEngine(authenticated: false, posts: posts, store: store).run() }

        #expect(error?.code == .contractViolation && error?.reason.contains("go in circles; the 3 pages read are kept") == true)
        #expect(await store.transactions == (pagesPerTransaction == 1 ? [["c0"], ["c1"], ["c0"]] : [["c0"], ["c1", "c0"]]))
        let fetchesWhenRunEnded = log.count("page")
        try await Task.sleep(for: .milliseconds(50))
        #expect(log.count("page") == fetchesWhenRunEnded, "a fetch ran after run() returned")
        #expect(fetchesWhenRunEnded == 3, "\(log.all)")
        #expect(await store.lockHolds == 0)
    }
}
