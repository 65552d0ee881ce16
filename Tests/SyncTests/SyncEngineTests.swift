import Core
import Foundation
import Synchronization
import Sync
import Testing

/// The sync logic over recording mocks: given some service behaviour, when a sync runs,
/// then these calls happen (and, on errors, these do not).
@Suite struct SyncEngineTests {
    let log = CallLog()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func makeEngine(auth: MockAuthentication? = nil, posts: MockPosts, videos: MockVideos? = nil, store: MockStore,
                    sleeps: SleepRecorder = SleepRecorder()) -> SyncEngine {
        let services = SyncEngine.Services(authentication: auth ?? MockAuthentication(log: log), posts: posts,
                                           videos: videos ?? MockVideos(log: log), store: store, requests: RequestCounter())
        let now = self.now
        return SyncEngine(feed: "home", services: services, now: { now }, sleep: { sleeps.record($0) })
    }

    @Test func firstSyncLogsInWalksEveryPageAndCommitsEachWithItsCursor() async throws {
        let posts = MockPosts(log: log, [
            .success(makePage([makePost("p1"), makePost("p2")], cursor: "2", hasMore: true)),
            .success(makePage([makePost("p3")], deleting: ["p1"], cursor: "4", hasMore: false)),
        ])
        let store = MockStore(log: log)

        let report = try await makeEngine(posts: posts, store: store).run()

        // Page 2 is fetched while page 1 commits, so only these orders are fixed.
        let calls = log.all
        #expect(calls.prefix(4) == ["lock", "logIn", "saveSession", "page(after: start)"])
        #expect(calls.filter { $0.hasPrefix("apply") } == ["apply(2)", "apply(4)"])
        #expect(calls.firstIndex(of: "page(after: 2)")! < calls.firstIndex(of: "apply(4)")!)
        #expect(calls.suffix(2) == ["recordSync(ok)", "unlock"])
        #expect(report.newPosts == 3 && report.deletedPosts == 1 && report.pages == 2)
        #expect(await store.storedCursor == FeedCursor(position: "4"))
        #expect(await Set(store.posts.keys) == ["p2", "p3"])
    }

    /// A store that holds commits `holding` until the fetch of page n + `ahead` has begun (bounded:
    /// 600 s, for a busy machine), then gives the fetcher time to overreach; noting the fetches
    /// begun by each commit in `seen`.
    func holdingStore(_ holding: Set<Int>, ahead: Int, pagesPerTransaction: Int = 1, failing: Int? = nil,
                      seen: FetchesSeen) -> MockStore {
        let log = self.log
        return MockStore(log: log, failCommitNumber: failing, pagesPerTransaction: pagesPerTransaction, beforeCommit: { number in
            seen.commitsBegun.withLock { $0 += 1 }
            func requested(_ cursor: Int) -> Bool { log.all.contains("page(after: \(cursor))") }
            if holding.contains(number) {
                let deadline = ContinuousClock.now + .seconds(600)
                while !requested(number + ahead - 1) && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
                for _ in 0..<200 where !requested(number + ahead) { try? await Task.sleep(for: .milliseconds(1)) }
            }
            seen.byCommit.withLock { $0[number] = log.all.filter { $0.hasPrefix("page") } }
        })
    }

    @Test func theNextTwoLargePagesAreFetchedWhileOneCommitsAndNoMoreThanThreeAreHeld() async throws {
        // Pages of 1,000 posts: the posts a sync holds past its first three pages, so it holds three.
        let posts = MockPosts(log: log, (1...7).map { page in
            .success(makePage((1...1_000).map { makePost("p\(page)-\($0)") }, cursor: "\(page)", hasMore: page < 7))
        })
        let seen = FetchesSeen()
        let store = holdingStore([1, 3], ahead: 2, seen: seen)

        let report = try await makeEngine(posts: posts, store: store).run()

        let seenDuringCommit = seen.byCommit.withLock { $0 }
        #expect(seenDuringCommit[1] == ["page(after: start)", "page(after: 1)", "page(after: 2)"],
                "pages 2 and 3 are requested before page 1 commits, page 4 only after it has")
        #expect(seenDuringCommit[3] == (["start"] + (1...4).map(String.init)).map { "page(after: \($0))" })
        #expect(log.all.filter { $0.hasPrefix("apply") } == (1...7).map { "apply(\($0))" })
        #expect(report.pages == 7 && report.newPosts == 7_000)
        #expect(await store.storedCursor == FeedCursor(position: "7"))
    }

    @Test func smallPagesAreHeldUpToTwelveAndThoseWaitingCommitTogether() async throws {
        let seen = FetchesSeen()
        let posts = MockPosts(log: log, (1...30).map { .success(makePage([makePost("p\($0)")], cursor: "\($0)", hasMore: $0 < 30)) },
                              beforeAnswer: seen.firstCommitAlone)
        // Commit 1 is held until page 12 is being fetched: twelve pages held, the thirteenth not asked for.
        let store = holdingStore([1], ahead: 11, pagesPerTransaction: 8, seen: seen)

        let report = try await makeEngine(posts: posts, store: store).run()

        #expect(seen.byCommit.withLock { $0[1] } == (["start"] + (1...11).map(String.init)).map { "page(after: \($0))" })
        let transactions = await store.transactions
        #expect(transactions.prefix(2) == [["1"], (2...9).map(String.init)],
                "the eight pages waiting when page 1 has committed go in one transaction, the store's most")
        #expect(transactions.allSatisfy { $0.count <= 8 })
        #expect(transactions.joined().map { $0 } == (1...30).map(String.init))
        #expect(report.pages == 30 && report.newPosts == 30)
        #expect(await store.storedCursor == FeedCursor(position: "30"))
    }

    @Test func aFailedCommitOfSeveralPagesKeepsNoneOfThemAndTheCursorWhereItWas() async throws {
        let seen = FetchesSeen()
        let posts = MockPosts(log: log, (1...12).map { .success(makePage([makePost("p\($0)")], cursor: "\($0)", hasMore: $0 < 12)) },
                              beforeAnswer: seen.firstCommitAlone)
        let store = holdingStore([1], ahead: 6, pagesPerTransaction: 4, failing: 2, seen: seen)

        let error = await #expect(throws: ServiceError.self) { try await makeEngine(posts: posts, store: store).run() }

        #expect(error?.code == .storage)
        #expect(await store.transactions == [["1"]], "the second commit, of pages 2 to 5, left nothing")
        #expect(log.all.filter { $0.hasPrefix("apply") } == (1...5).map { "apply(\($0))" })
        #expect(await store.storedCursor == FeedCursor(position: "1"))
        #expect(await store.posts.keys.sorted() == ["p1"])
        #expect(await store.outcomes.last?.error != nil)
    }

    @Test func aStoredFreshSessionIsReusedWithoutLoggingIn() async throws {
        let store = MockStore(log: log, cursor: FeedCursor(position: "9"), session: makeSession("stored", expiresAt: now + 3600))
        let posts = MockPosts(log: log, [.success(makePage([], cursor: "9", hasMore: false))])

        _ = try await makeEngine(posts: posts, store: store).run()

        #expect(log.count("logIn") == 0 && log.count("refresh") == 0)
        #expect(posts.tokens.withLock { $0 } == ["stored"])
        #expect(log.all.contains("page(after: 9)"))
    }

    @Test func aSessionAboutToExpireIsRefreshedBeforeFetching() async throws {
        let store = MockStore(log: log, session: makeSession("old", expiresAt: now + 10))
        let posts = MockPosts(log: log, [.success(makePage([], cursor: "1", hasMore: false))])

        _ = try await makeEngine(posts: posts, store: store).run()

        #expect(Array(log.all.dropFirst().prefix(3)) == ["refresh", "saveSession", "page(after: start)"])
        #expect(posts.tokens.withLock { $0 } == ["refreshed"])
    }

    @Test func aRejectedRefreshFallsBackToLoggingIn() async throws {
        let auth = MockAuthentication(log: log, refresh: .failure(ServiceError(.unauthorized, "refreshing", "401")))
        let store = MockStore(log: log, session: makeSession("old", expiresAt: now - 10))
        let posts = MockPosts(log: log, [.success(makePage([], cursor: "1", hasMore: false))])

        _ = try await makeEngine(auth: auth, posts: posts, store: store).run()

        #expect(Array(log.all.dropFirst().prefix(3)) == ["refresh", "logIn", "saveSession"])
        #expect(posts.tokens.withLock { $0 } == ["login"])
    }

    @Test func aFailedLoginFetchesNothingAndWritesNothing() async throws {
        let auth = MockAuthentication(log: log, logIn: .failure(ServiceError(.unauthorized, "logging in", "the server answered 401")))
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1")], cursor: "1", hasMore: false))])
        let store = MockStore(log: log)

        await #expect(throws: ServiceError.self) { try await makeEngine(auth: auth, posts: posts, store: store).run() }

        #expect(log.count("page") == 0 && log.count("apply") == 0 && log.count("saveSession") == 0)
        #expect(await store.outcomes.map(\.error?.isEmpty) == [false])
    }

    @Test func aFailedStoreWriteNeverAdvancesTheCursorAndTheNextRunResumesThere() async throws {
        let posts = MockPosts(log: log, [
            .success(makePage([makePost("p1")], cursor: "1", hasMore: true)),
            .success(makePage([makePost("p2")], cursor: "2", hasMore: true)),
        ])
        let store = MockStore(log: log, failCommitNumber: 2)

        await #expect(throws: ServiceError.self) { try await makeEngine(posts: posts, store: store).run() }

        #expect(await store.storedCursor == FeedCursor(position: "1"))
        #expect(await store.posts.keys.sorted() == ["p1"])
        #expect(log.all.filter { $0.hasPrefix("apply") } == ["apply(1)", "apply(2)"], "nothing is applied after the failed write")

        let resumed = MockPosts(log: log, [.success(makePage([makePost("p2")], cursor: "2", hasMore: false))])
        _ = try await makeEngine(posts: resumed, store: store).run()
        #expect(log.all.contains("page(after: 1)"))
        #expect(await store.posts.keys.sorted() == ["p1", "p2"])
    }

    @Test func aPageThatFailsToDecodeCommitsNothing() async throws {
        let notJSON = ServiceError(.invalidResponse, "fetching the feed", "the body is not JSON")
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1")], cursor: "1", hasMore: true))]
                                        + Array(repeating: .failure(notJSON), count: 6))
        let store = MockStore(log: log)

        let error = await #expect(throws: ServiceError.self) { try await makeEngine(posts: posts, store: store).run() }

        #expect(error?.code == .invalidResponse)
        #expect(error?.reason == "the body is not JSON; gave up after 6 attempts")
        #expect(log.count("apply") == 1)
        #expect(await store.storedCursor == FeedCursor(position: "1"))
        #expect(log.all.suffix(2) == ["recordSync(error)", "unlock"])
    }

    @Test func aRejectedTokenIsRenewedOnceAndTheRequestRetried() async throws {
        let store = MockStore(log: log, session: makeSession("stale", expiresAt: now + 3600))
        let posts = MockPosts(log: log, [
            .failure(ServiceError(.unauthorized, "fetching", "401")),
            .success(makePage([makePost("p1")], cursor: "1", hasMore: false)),
        ])

        _ = try await makeEngine(posts: posts, store: store).run()

        #expect(posts.tokens.withLock { $0 } == ["stale", "refreshed"])
        #expect(log.count("refresh") == 1 && log.count("logIn") == 0)
    }

    @Test func aTokenStillRejectedAfterOneRefreshAndOneLoginStopsTheSync() async throws {
        let store = MockStore(log: log, session: makeSession("stale", expiresAt: now + 3600))
        let unauthorized = ServiceError(.unauthorized, "fetching", "401")
        let posts = MockPosts(log: log, Array(repeating: .failure(unauthorized), count: 5))

        let error = await #expect(throws: ServiceError.self) { try await makeEngine(posts: posts, store: store).run() }

        #expect(error?.code == .unauthorized)
        #expect(log.all.filter { $0.hasPrefix("page") || $0 == "refresh" || $0 == "logIn" }
                == ["page(after: start)", "refresh", "page(after: start)", "logIn", "page(after: start)"], "no retry storm")
        #expect(posts.tokens.withLock { $0 } == ["stale", "refreshed", "login"])
    }

    @Test func transientFailuresAreRetriedWithGrowingJitteredWaits() async throws {
        let sleeps = SleepRecorder()
        let down = ServiceError(.unavailable, "fetching", "the server answered 503")
        let posts = MockPosts(log: log, [.failure(down), .failure(down), .failure(down),
                                         .success(makePage([makePost("p1")], cursor: "1", hasMore: false))])

        let report = try await makeEngine(posts: posts, store: MockStore(log: log), sleeps: sleeps).run()

        #expect(report.newPosts == 1)
        #expect(sleeps.waits.count == 3)
        for (index, wait) in sleeps.waits.enumerated() { #expect((0...(0.25 * pow(2, Double(index)))).contains(wait)) }
    }

    @Test func aSpentRetryBudgetFailsAndLeavesTheCursorAtTheLastCommittedPage() async throws {
        let sleeps = SleepRecorder()
        let down = ServiceError(.unavailable, "fetching", "the connection was refused")
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1")], cursor: "1", hasMore: true))]
                                        + Array(repeating: .failure(down), count: 10))
        let store = MockStore(log: log)

        let error = await #expect(throws: ServiceError.self) { try await makeEngine(posts: posts, store: store, sleeps: sleeps).run() }

        #expect(error?.code == .unavailable)
        #expect(log.count("page") == 7, "one good page, then six attempts")
        #expect(sleeps.waits.count == 5 && sleeps.waits.allSatisfy { $0 <= 8 })
        #expect(await store.storedCursor == FeedCursor(position: "1"))
    }

    @Test func aRateLimitIsWaitedOutAndTheRequestRetried() async throws {
        let sleeps = SleepRecorder()
        let posts = MockPosts(log: log, [
            .failure(ServiceError(.rateLimited(until: now + 7), "fetching", "429")),
            .success(makePage([makePost("p1")], cursor: "1", hasMore: false)),
        ])

        let report = try await makeEngine(posts: posts, store: MockStore(log: log), sleeps: sleeps).run()

        #expect(sleeps.waits == [7])
        #expect(report.newPosts == 1)
    }

    @Test func aRateLimitLongerThanTheCapFailsInsteadOfWaiting() async throws {
        let sleeps = SleepRecorder()
        let posts = MockPosts(log: log, [.failure(ServiceError(.rateLimited(until: now + 3600), "fetching", "429"))])

        await #expect(throws: ServiceError.self) { try await makeEngine(posts: posts, store: MockStore(log: log), sleeps: sleeps).run() }
        #expect(sleeps.waits.isEmpty)
    }

    @Test func postsAreStoredEvenWhenTheVideoHostFails() async throws {
        let videos = MockVideos(log: log, failure: ServiceError(.unavailable, "looking up videos", "down"))
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1", videos: ["v1", "v2"])], cursor: "1", hasMore: false))])
        let store = MockStore(log: log)

        let report = try await makeEngine(posts: posts, videos: videos, store: store).run()

        #expect(report.newPosts == 1 && report.videosUnresolved == 2 && report.videosResolved == 0)
        #expect(await store.posts["p1"] != nil)
        #expect(await store.unresolved == ["v1", "v2"])
    }

    @Test func unresolvedVideosAreRetriedOnTheNextSync() async throws {
        let store = MockStore(log: log)
        let firstPosts = MockPosts(log: log, [.success(makePage([makePost("p1", videos: ["v1"])], cursor: "1", hasMore: false))])
        _ = try await makeEngine(posts: firstPosts, videos: MockVideos(log: log, failure: ServiceError(.unavailable, "x", "down")), store: store).run()

        let posts = MockPosts(log: log, [.success(makePage([], cursor: "1", hasMore: false))])
        let report = try await makeEngine(posts: posts, videos: MockVideos(log: log, known: [makeVideo("v1")]), store: store).run()

        #expect(report.videosResolved == 1)
        #expect(await store.videos["v1"] != nil)
        #expect(await store.unresolved.isEmpty)
    }

    @Test func onlyVideosTheStoreLacksAreLookedUp() async throws {
        let store = MockStore(log: log)
        _ = await store.saveVideos([makeVideo("v1")], under: FeedLease(feed: "home", token: "t"))
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1", videos: ["v1", "v2"]), makePost("p2", videos: ["v2"])],
                                                          cursor: "1", hasMore: false))])

        _ = try await makeEngine(posts: posts, videos: MockVideos(log: log, known: [makeVideo("v2")]), store: store).run()

        #expect(log.all.filter { $0.hasPrefix("videos") } == ["videos(v2)"])
    }

    @Test func skippedItemsAreCountedAndTheRestOfThePageCommits() async throws {
        var page = makePage([makePost("p1")], cursor: "1", hasMore: false)
        page.skipped = [SkippedItem(id: "p2", reason: "created_at is malformed")]
        let store = MockStore(log: log)

        let report = try await makeEngine(posts: MockPosts(log: log, [.success(page)]), store: store).run()

        #expect(report.skippedItems == 1 && report.newPosts == 1)
    }

    @Test func aStoreLockedByAnotherProcessFetchesAndRecordsNothing() async throws {
        let store = MockStore(log: log)
        await store.setLockError(ServiceError(.locked, "waiting for the store's write lock", "pid 42 (feedsyncd) holds it"))
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1")], cursor: "1", hasMore: false))])

        let error = await #expect(throws: ServiceError.self) { try await makeEngine(posts: posts, store: store).run() }

        #expect(error?.code == .locked)
        // A try at once, then the wait for it (up to lockWait): nothing else.
        #expect(log.all == ["lock", "lock"])
    }

    @Test func waitingForAnotherProcessesLeaseHandsTheSyncSlotBack() async throws {
        let slots = SyncSlots(limit: 1)
        let store = MockStore(log: log)
        await store.setLockError(ServiceError(.locked, "waiting for the lease on feed home", "worker 2 holds it"))
        let slotsInUseWhileWaiting = Mutex<Int?>(nil)
        await store.freeLockForWaiters { let inUse = await slots.inUse; slotsInUseWhileWaiting.withLock { $0 = inUse } }
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1")], cursor: "1", hasMore: false))])
        let services = SyncEngine.Services(authentication: MockAuthentication(log: log), posts: posts, videos: MockVideos(log: log),
                                           store: store, requests: RequestCounter())
        let engine = SyncEngine(feed: "home", services: services, waiter: Waiter(slots: slots, feed: "home"))

        let report = try await slots.run(feed: "home") { try await engine.run() }

        #expect(report.newPosts == 1)
        #expect(slotsInUseWhileWaiting.withLock { $0 } == 0, "the slot went back while the lease was waited for")
        #expect(await slots.inUse == 0)
    }

    @Test func aFeedAnotherDaemonSyncedMeanwhileIsNeitherFetchedNorRecorded() async throws {
        let store = MockStore(log: log)
        await store.setDue(false)
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1")], cursor: "1", hasMore: false))])

        let outcome = try await makeEngine(posts: posts, store: store).runIfDue()

        #expect(outcome == .syncedSince(nextAttempt: nil))
        #expect(log.all == ["lock"])
        #expect(await store.lockHolds == 0)
    }

    @Test func theLockIsReleasedWhenTheSyncFails() async throws {
        let store = MockStore(log: log)
        let posts = MockPosts(log: log, [.failure(ServiceError(.unavailable, "fetching", "503"))])

        await #expect(throws: ServiceError.self) { try await makeEngine(posts: posts, store: store).run() }

        #expect(await store.lockHolds == 0)
        #expect(log.all.last == "unlock")
    }

    func storeHolding(_ ids: [String]) async throws -> MockStore {
        let store = MockStore(log: log)
        _ = try await store.apply(makePage(ids.map { makePost($0) }, cursor: "0", hasMore: false), videos: [], under: FeedLease(feed: "home", token: "test"))
        return store
    }

    @Test func aFullSyncDeletesCachedPostsTheServerNoLongerHas() async throws {
        let store = try await storeHolding(["p1", "p2", "p3", "p4"])
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1"), makePost("p2"), makePost("p3")], cursor: "3", hasMore: false))])

        let report = try await makeEngine(posts: posts, store: store).run(full: true)

        #expect(report.deletedPosts == 1)
        #expect(await store.posts.keys.sorted() == ["p1", "p2", "p3"])
    }

    @Test func aFullSyncThatWouldDeleteMostOfTheFeedRefusesAndDeletesNothing() async throws {
        let store = try await storeHolding(["p1", "p2", "p3", "p4"])
        let posts = MockPosts(log: log, [.success(makePage([], cursor: "0", hasMore: false))])

        let error = await #expect(throws: ServiceError.self) { try await makeEngine(posts: posts, store: store).run(full: true) }

        #expect(error?.code == .refused)
        #expect(error?.reason.hasPrefix("it would delete 4 of 4 cached posts (100%)") == true)
        #expect(await store.posts.count == 4)
        #expect(!log.all.contains("deleteUnseenPosts"))
    }

    @Test func forceDeleteLetsAFullSyncDeleteEvenMostOfTheFeed() async throws {
        let store = try await storeHolding(["p1", "p2", "p3", "p4"])
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1")], cursor: "1", hasMore: false))])
        var options = SyncEngine.Options()
        options.forceDelete = true
        let services = SyncEngine.Services(authentication: MockAuthentication(log: log), posts: posts, videos: MockVideos(log: log),
                                           store: store, requests: RequestCounter())

        let report = try await SyncEngine(feed: "home", services: services, options: options, sleep: { _ in }).run(full: true)

        #expect(report.deletedPosts == 3)
        #expect(await store.posts.keys.sorted() == ["p1"])
    }

    @Test func aFullSyncKeepsAPostTheServerListsButTheMappingSkipped() async throws {
        let store = try await storeHolding(["p1", "p2", "p3", "p4"])
        var page = makePage([makePost("p1"), makePost("p2"), makePost("p3")], cursor: "3", hasMore: false)
        page.skipped = [SkippedItem(id: "p4", reason: "created_at \"not-a-date\" is not an ISO 8601 time", postID: "p4")]
        let posts = MockPosts(log: log, [.success(page)])

        let report = try await makeEngine(posts: posts, store: store).run(full: true)

        #expect(report.deletedPosts == 0 && report.walkedToSweep && report.sweepWithheld == nil)
        #expect(await store.posts.keys.sorted() == ["p1", "p2", "p3", "p4"])
    }

    @Test func aFullSyncThatSkippedAnItemWithoutAnIdDeletesNothingAndSaysWhy() async throws {
        let store = try await storeHolding(["p1", "p2", "p3", "p4"])
        let first = makePage([makePost("p1")], cursor: "1", hasMore: true)
        var last = makePage([makePost("p2")], cursor: "2", hasMore: false)
        last.skipped = [SkippedItem(id: nil, reason: "op is missing")]
        let posts = MockPosts(log: log, [.success(first), .success(last)])
        let notices = Mutex<[String]>([])
        var options = SyncEngine.Options()
        options.log = Logger(sentences: { line in notices.withLock { $0.append(line) } })
        let services = SyncEngine.Services(authentication: MockAuthentication(log: log), posts: posts, videos: MockVideos(log: log),
                                           store: store, requests: RequestCounter())

        let report = try await SyncEngine(feed: "home", services: services, options: options, sleep: { _ in }).run(full: true)

        #expect(report.deletedPosts == 0)
        #expect(report.sweepWithheld?.contains("an item was skipped without an id (op is missing)") == true)
        #expect(await store.posts.keys.sorted() == ["p1", "p2", "p3", "p4"])
        #expect(!log.all.contains("deleteUnseenPosts"))
        #expect(notices.withLock { $0 } == ["feed home: \(report.sweepWithheld ?? "")"])
    }

    @Test func fullSyncStartsFromTheBeginningWhateverTheStoredCursor() async throws {
        let store = MockStore(log: log, cursor: FeedCursor(position: "50"))
        let posts = MockPosts(log: log, [.success(makePage([], cursor: "50", hasMore: false))])

        _ = try await makeEngine(posts: posts, store: store).run(full: true)

        #expect(log.all.contains("page(after: start)"))
    }
}
