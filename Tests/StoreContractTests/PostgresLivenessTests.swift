import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import Testing

/// Runs `operation`, giving up after `seconds` (then `unblock` frees it): a test of a bound
/// must fail, not hang, when the bound does not hold. An operation that never ends is left behind.
func bounded<T: Sendable>(_ seconds: Double, unblock: @escaping @Sendable () -> Void,
                          _ operation: @escaping @Sendable () async throws -> T) async -> (result: Result<T, any Error>?, seconds: Double) {
    let clock = ContinuousClock(), started = clock.now
    let first = FirstResult<T>()
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>?, Never>) in
        first.set(continuation)
        Task { first.finish(await Result { try await operation() }) }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            if first.finish(nil) { unblock() }
        }
    }
    let elapsed = clock.now - started
    return (result, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

/// Resumes a continuation once, with whichever outcome comes first.
private final class FirstResult<T: Sendable>: @unchecked Sendable {
    // @unchecked: `continuation` is read and written only under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Result<T, any Error>?, Never>?

    func set(_ continuation: CheckedContinuation<Result<T, any Error>?, Never>) { lock.withLock { self.continuation = continuation } }

    /// Whether this outcome was the first.
    @discardableResult
    func finish(_ result: Result<T, any Error>?) -> Bool {
        let waiting: CheckedContinuation<Result<T, any Error>?, Never>? = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: result)
        return waiting != nil
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// A PostgreSQL server or link that goes silent must cost a bounded wait, never a hung store.
@Suite(.needsPostgres)
struct PostgresLivenessTests {
    /// Statement and TCP timeouts of 1 s each: an answer is given up on after 2 s.
    static let liveness = PostgresLiveness(keepalivesIdle: 1, tcpUserTimeout: 1, statementTimeout: 1, lockTimeout: 1)

    @Test func aConnectionThatGoesSilentFailsWithinTheBoundAndIsRemade() async throws {
        let folder = try #require(await PostgresServer.folder())
        let database = try await PostgresServer.makeDatabase()
        let proxy = try StallingProxy(forwardingTo: "\(folder)/.s.PGSQL.5432")
        defer { proxy.stop() }
        let store = PostgresFeedStore(conninfo: "postgresql://postgres@127.0.0.1:\(proxy.port)/\(database.name)?connect_timeout=5",
                                      leasePeriod: 30, liveness: Self.liveness)
        try await store.open()
        // Only this test's calls meet the frozen link: a renewal of its own (every 10 s) that
        // came first on a slow machine would find it, and remake the connection for the read.
        await store.stopRenewingForTests()
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        _ = try await store.apply(makePage([.upsert(makePost("p1"))], cursor: "1"), videos: [], under: lease)
        let daemon = try await store.join(startedAt: Date())

        proxy.freeze()
        let (read, seconds) = await bounded(600, unblock: proxy.stop) { try await store.cursor(ofFeed: "home") }
        let error = try #require(read.map { result -> (any Error)? in if case .failure(let error) = result { return error }; return nil } ?? nil,
                                 "the read failed rather than hanging for 600 s or succeeding: \(String(describing: read))")
        #expect((error as? ServiceError)?.code == .storage)
        // The store's own answer timeout (2 s), as its sentence reports it; a busy machine can
        // only make the wait longer, never end it sooner.
        let sentence = "\(error)"
        #expect(sentence.contains("did not answer within 2 s") && !sentence.contains("\n"), "one sentence: \(sentence)")
        #expect(seconds >= 1.9, "given up after the answer timeout (2 s), not before: \(seconds) s")

        // Remade for the next operation: renewal and the heartbeat work again.
        await store.renewLeases()
        try await store.beat(daemon)
        #expect(try await store.cursor(ofFeed: "home") == FeedCursor(position: "1"))

        // Silent again: renewal and the heartbeat each return on the store's own timeouts,
        // without an answer (the frozen link would hold them for ever).
        proxy.freeze()
        let renewal = await bounded(600, unblock: proxy.stop) { await store.renewLeases() }
        #expect(renewal.result != nil, "renewal did not return on its own")
        let beat = await bounded(600, unblock: proxy.stop) { try await store.beat(daemon) }
        #expect(beat.result != nil, "the heartbeat did not return on its own")
        if case .failure(let error)? = beat.result { #expect("\(error)".contains("did not answer within 2 s"), "\(error)") }
    }

    @Test func theSessionHasTheConfiguredTimeouts() async throws {
        let database = try await PostgresServer.makeDatabase()
        let store = PostgresFeedStore(conninfo: database.url, liveness: Self.liveness)
        try await store.open()
        #expect(try await store.run("reading settings", "SHOW statement_timeout").first?[0] == "1s")
        #expect(try await store.run("reading settings", "SHOW lock_timeout").first?[0] == "1s")
        #expect(try await store.run("reading settings", "SHOW synchronous_commit").first?[0] == "off")
        // The server compiles no plan: a status read of 11,000 feeds spent 428 of 534 ms in JIT (issue 40).
        #expect(try await store.run("reading settings", "SHOW jit").first?[0] == "off")
    }

    @Test func leaseRenewalRemakesAConnectionTheServerDropped() async throws {
        let database = try await PostgresServer.makeDatabase()
        let store = PostgresFeedStore(conninfo: database.url, leasePeriod: 30)
        try await store.open()
        await store.stopRenewingForTests()
        _ = try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false)
        let expiry = "SELECT expires_at FROM feed_leases WHERE feed = 'home'"
        let before = try #require(Int64(try await store.run("reading the lease", expiry).first?[0] ?? ""))
        try await database.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        try await Task.sleep(for: .milliseconds(20))   // the server's clock moves on, so a renewal shows
        await store.renewLeases()
        let after = try #require(Int64(try await store.run("reading the lease", expiry).first?[0] ?? ""))
        #expect(after > before, "the first renewal after the drop renewed the lease on a new connection")
    }

    @Test func theRenewalTaskEndsWithItsStore() async throws {
        let database = try await PostgresServer.makeDatabase()
        var store: PostgresFeedStore? = PostgresFeedStore(conninfo: database.url, leasePeriod: 1)
        try await store?.open()
        let renewal = try #require(await store?.renewalForTests)
        weak let gone = store
        store = nil
        #expect(try await eventually { gone == nil }, "nothing keeps the dropped store alive")
        let ended = await bounded(30, unblock: {}) { await renewal.value }
        #expect(ended.result != nil, "the renewal task ended with its store")
    }

    @Test func readMarksAndSweepsWaitForTheDiskAndPagesDoNot() async throws {
        let database = try await PostgresServer.makeDatabase()
        let store = PostgresFeedStore(conninfo: database.url)
        try await store.open()
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        let synchronous = "SET LOCAL synchronous_commit = on"
        await store.recordStatementsForTests()
        _ = try await store.apply(makePage([.upsert(makePost("p1")), .upsert(makePost("p2"))], cursor: "2"), videos: [], under: lease)
        #expect(await store.statementsSentForTests.contains(synchronous) == false, "a page commits without waiting for the disk")
        await store.recordStatementsForTests()
        _ = try await store.setRead(true, postID: "p1", inFeed: nil)
        #expect(await store.statementsSentForTests.contains(synchronous))
        await store.recordStatementsForTests()
        var walk = FullWalk(feed: "home")
        walk.note(makePage([.upsert(makePost("p1"))], cursor: "1"))
        #expect(try await store.deleteUnseenPosts(of: walk, under: lease) == 1)
        #expect(await store.statementsSentForTests.contains(synchronous))
    }
}

/// Whether `condition` comes to hold, waiting up to `seconds` (long, for a busy machine), looking every 50 ms.
func eventually(within seconds: Double = 600, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
