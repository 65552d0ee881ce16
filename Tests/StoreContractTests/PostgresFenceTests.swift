import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import Testing

/// Two workers on one database, as `makeStores(.postgres)` makes them.
func makeWorkers(lease: TimeInterval = 30) async throws -> (PostgresFeedStore, PostgresFeedStore) {
    let url = try await PostgresServer.makeDatabase().url
    let first = PostgresFeedStore(conninfo: url, leasePeriod: lease), second = PostgresFeedStore(conninfo: url, leasePeriod: lease)
    try await first.open()
    try await second.open()
    return (first, second)
}

/// Lets a held page go on when told; tells when a page has arrived at the gate.
actor PageGate {
    private var arrived: CheckedContinuation<Void, Never>?
    private var hasArrived = false
    private var proceed: CheckedContinuation<Void, Never>?

    func pass() async {
        hasArrived = true
        arrived?.resume()
        arrived = nil
        await withCheckedContinuation { proceed = $0 }
    }

    func waitForArrival() async {
        if hasArrived { return }
        await withCheckedContinuation { arrived = $0 }
    }

    func open() {
        proceed?.resume()
        proceed = nil
    }
}

/// A shared store fails closed: no write to a feed commits unless this worker holds its lease.
@Suite(.needsPostgres)
struct PostgresFenceTests {
    @Test func everyFeedWriteWithoutAHeldLeaseIsRefused() async throws {
        let (store, _) = try await makeWorkers()
        let video = Video(id: "v1", title: "V", duration: 1, streamURL: URL(string: "https://example.com/v1.mp4")!)
        var walk = FullWalk(feed: "home")
        walk.note(makePage([], cursor: "0"))
        let sweep = walk
        // Each write is given the lease it is made under, as a sync gives it.
        let writes: [(String, @Sendable (FeedLease) async throws -> Void)] = [
            ("a page", { lease in _ = try await store.apply(makePage([.upsert(makePost("p1"))], cursor: "1"), videos: [], under: lease) }),
            ("the backend", { lease in try await store.setBackend("api", under: lease) }),
            ("videos", { lease in _ = try await store.saveVideos([video], under: lease) }),
            ("a sweep", { lease in _ = try await store.deleteUnseenPosts(of: sweep, under: lease) }),
            ("a run record", { lease in try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home")),
                                                                   under: lease) }),
        ]
        let neverTaken = FeedLease(feed: "home", token: "never taken")
        for (what, write) in writes {
            let error = await #expect(throws: ServiceError.self, "\(what) without the lease") { try await write(neverTaken) }
            #expect(error?.code == .locked, "\(what)")
        }
        // Once given back, the same again.
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        for (what, write) in writes { try await write(lease); _ = what }
        await store.release(lease)
        for (what, write) in writes {
            let error = await #expect(throws: ServiceError.self, "\(what) after the lease was given back") { try await write(lease) }
            #expect(error?.code == .locked, "\(what)")
        }
        #expect(try await store.backend(ofFeed: "home") == "api", "only the write under the lease was kept")
    }

    /// A sync's lease ran out and another worker synced the feed; then this worker took the feed
    /// again (a new sync, or the live mirror). Every write of the first sync, made under the lease
    /// it was given, is refused: it is not the lease this worker holds now. Its sweep would
    /// otherwise delete what the newer holder had just written. Giving the lost lease back does
    /// not give back the newer one.
    @Test func everyWriteUnderALostLeaseIsRefusedWhileTheWorkerHoldsANewerOne() async throws {
        let (store, other) = try await makeWorkers(lease: 1)
        let lost = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        await store.stopRenewingForTests()
        let taken = try #require(try await other.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 60, onlyIfDue: false))
        await other.release(taken)
        let newer = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 5, onlyIfDue: false))

        var late = makePage([.upsert(makePost("late"))], cursor: "9")
        late.streamPosition = "1700001000000001"
        late.renames = [AuthorRename(author: "u1", handle: "renamed", at: Date())]
        let error = await #expect(throws: ServiceError.self) {
            try await store.apply(late, videos: [], under: lost)
        }
        #expect(error?.code == .locked)
        #expect(try await other.cursor(ofFeed: "home") == nil, "nothing of the lost lease's page was kept")
        #expect(try await other.streamPosition(ofFeed: "home") == nil, "nor its stream position: the rename is streamed again")
        #expect(try await store.apply(makePage([.upsert(makePost("p1"))], cursor: "1"), videos: [], under: newer).inserted == 1)

        let video = Video(id: "v1", title: "V", duration: 1, streamURL: URL(string: "https://example.com/v1.mp4")!)
        let staleWalk = FullWalk(feed: "home")   // saw nothing: its sweep would delete p1
        let writes: [(String, @Sendable (FeedLease) async throws -> Void)] = [
            ("a sweep", { lease in _ = try await store.deleteUnseenPosts(of: staleWalk, under: lease) }),
            ("a run record", { lease in try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home")),
                                                                   under: lease) }),
            ("videos", { lease in _ = try await store.saveVideos([video], under: lease) }),
            ("the backend", { lease in try await store.setBackend("api", under: lease) }),
        ]
        for (what, write) in writes {
            let refused = await #expect(throws: ServiceError.self, "\(what) under the lost lease") { try await write(lost) }
            #expect(refused?.code == .locked, "\(what)")
        }
        #expect(try await other.posts(matching: PostQuery(feed: "home")).map(\.post.id) == ["p1"], "the stale sweep deleted nothing")
        #expect(try await other.backend(ofFeed: "home") == nil)
        await store.release(lost)
        #expect(try await store.apply(makePage([.upsert(makePost("p2"))], cursor: "2"), videos: [], under: newer).inserted == 1,
                "giving the lost lease back left the newer one held")
    }

    /// A page reached the store as the daemon stopped (SIGTERM): the heartbeat gave the leases
    /// back and a second worker took the feed before the page's transaction began.
    @Test(arguments: [false, true])
    func aPageHeldUntilTheLeaseWasGivenBackCommitsNothing(anotherWorkerTookIt: Bool) async throws {
        let (store, other) = try await makeWorkers()
        let daemon = try await store.join(startedAt: Date())
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        let gate = PageGate()
        await store.holdPageCommitsForTests { _ in await gate.pass() }
        let page = Task { try await store.apply(makePage([.upsert(makePost("late"))], cursor: "9"), videos: [], under: lease) }
        await gate.waitForArrival()
        await store.leave(daemon)
        if anotherWorkerTookIt {
            #expect(try await other.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false) != nil)
        }
        await gate.open()
        let error = await #expect(throws: ServiceError.self) { try await page.value }
        #expect(error?.code == .locked)
        #expect(try await other.cursor(ofFeed: "home") == nil, "nothing of the page was kept")
        #expect(try await other.posts(matching: PostQuery(feed: "home")).isEmpty)
    }

    @Test func theScheduleIsNotWrittenOverAnotherWorkersLease() async throws {
        let (store, other) = try await makeWorkers()
        let lease = try #require(try await other.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        let error = await #expect(throws: ServiceError.self) { try await store.setNextAttempt(Date(), ofFeed: "home") }
        #expect(error?.code == .locked)
        await other.release(lease)
        try await store.setNextAttempt(Date(timeIntervalSince1970: 1_900_000_000), ofFeed: "home")
        #expect(try await other.feedStatuses().first?.nextAttemptAt == Date(timeIntervalSince1970: 1_900_000_000))
    }

    /// Two daemons serve the same feeds; one stops. Only its own schedule is cleared.
    @Test func aStoppingDaemonClearsOnlyItsOwnSchedule() async throws {
        let (first, second) = try await makeWorkers()
        // Two daemons of one test process: an instance is host, pid and start time, so the starts differ.
        _ = try await first.join(startedAt: Date())
        _ = try await second.join(startedAt: Date().addingTimeInterval(1))
        let later = Date(timeIntervalSince1970: 1_900_000_000), latest = Date(timeIntervalSince1970: 1_900_000_100)
        try await first.setNextAttempt(later, ofFeed: "a")
        try await first.setNextAttempt(later, ofFeed: "b")
        try await second.setNextAttempt(latest, ofFeed: "b")   // the second synced b since and planned it anew
        try await first.setNextAttempt(later, ofFeed: "c")
        let lease = try #require(try await second.acquireLease(onFeed: "c", holder: "feedsyncd", wait: 0, onlyIfDue: false))

        try await first.unschedule(["a", "b", "c"])
        let next = Dictionary(uniqueKeysWithValues: try await second.feedStatuses().map { ($0.feed, $0.nextAttemptAt) })
        #expect(next["a"] == .some(nil), "the stopping daemon's own plan is cleared")
        #expect(next["b"] == .some(latest), "another daemon's plan is kept")
        #expect(next["c"] == .some(later), "a feed another daemon holds now is left alone")
        await second.release(lease)
        // Clearing one feed (a removed or stopped feed) is scoped the same way.
        try await first.setNextAttempt(nil, ofFeed: "b")
        #expect(try await second.feedStatuses().first { $0.feed == "b" }?.nextAttemptAt == latest)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only where a PostgreSQL server can be started; elsewhere it shows as skipped.
    static var needsPostgres: Self {
        .enabled("needs a PostgreSQL server the tests can start (see the printed reason)") { await PostgresServer.folder() != nil }
    }
}
