import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Waits that hand back their slot, and stops that hold their bounds, with real processes: the
/// reference server's request log gives the timing, so a loaded machine cannot fake a pass.
@Suite(.endToEnd) struct WaitsAndStopsEndToEndTests {
    /// Two feeds on two servers whose quota (3 requests in 8 s: a login and two of the three
    /// pages) runs out once in the middle of each sync, with one sync slot.
    func makeQuotaFeeds(_ scratch: Scratch) async throws -> (first: ReferenceServer, second: ReferenceServer, config: String) {
        let first = try ReferenceServer(posts: 300), second = try ReferenceServer(posts: 300, seed: 7)
        for server in [first, second] {
            try await server.control("POST", "/_control/faults", body: #"{"quota": 3, "quota_window": 8}"#)
        }
        let catalog = repository.appendingPathComponent("Fixtures/videos/catalog.json").path
        let config = try scratch.writeConfig(baseURL: first.baseURL, interval: "1h", extraFeeds: """
            , {"name": "second", "interval": "1h",
               "posts": {"integration": "httpapi", "baseURL": "\(second.baseURL)", "username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD"},
               "videos": {"integration": "mockvideohost", "catalog": "\(catalog)"}}
            """, daemon: #"{"concurrency": 1}"#)
        return (first, second, config)
    }

    /// The longest pause between a server's `/v1/` requests (the quota wait): its start and end
    /// on the server's clock.
    func longestPause(_ server: ReferenceServer) async throws -> (start: Double, end: Double)? {
        let logged = try await server.control("GET", "/_control/requests")["requests"] as? [[String: Any]] ?? []
        let times = logged.filter { ($0["request"] as? String)?.contains("/v1/") == true }.compactMap { $0["t"] as? Double }.sorted()
        return zip(times, times.dropFirst()).max { $0.1 - $0.0 < $1.1 - $1.0 }.map { (start: $0.0, end: $0.1) }
    }

    /// With one slot, each feed's quota wait must overlap the other's: the one that waits first
    /// hands the slot over, so the other syncs (and meets its own quota) meanwhile. Holding the
    /// slot through the wait, as before, puts one feed's whole sync before or after the other's.
    func expectWaitsOverlap(_ first: ReferenceServer, _ second: ReferenceServer, _ log: String) async throws {
        let a = try #require(try await longestPause(first)), b = try #require(try await longestPause(second))
        #expect(a.end - a.start > 3 && b.end - b.start > 3, "each feed waited for its quota: \(a) \(b)")
        #expect(a.start < b.end && b.start < a.end, "the quota waits overlapped: \(a) \(b)\n\(log)")
    }

    @Test func aFeedWaitingOutItsQuotaLetsAFeedOnAnotherServerSyncWithConcurrencyOne() async throws {
        let scratch = try Scratch()
        let (first, second, config) = try await makeQuotaFeeds(scratch)
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually {
            let (home, second) = (try await postCount(scratch.database), try await postCount(scratch.database, feed: "second"))
            return home == 300 && second == 300
        }, "\(daemon.log)")
        try await expectWaitsOverlap(first, second, daemon.log)
        #expect(daemon.log.contains("quota is spent; waiting"), "the wait is logged as a notice")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func pullHandsTheSlotOverDuringAQuotaWaitToo() async throws {
        let scratch = try Scratch()
        let (first, second, config) = try await makeQuotaFeeds(scratch)
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(try await postCount(scratch.database) == 300)
        #expect(try await postCount(scratch.database, feed: "second") == 300)
        try await expectWaitsOverlap(first, second, pull.stderr)
    }

    @Test func SIGTERMStopsTheSyncBeforeTheDaemonLeavesTheStore() async throws {
        // Half a second a page: a sync is under way when the signal comes.
        let server = try ReferenceServer(posts: 10_000)
        try await server.control("POST", "/_control/faults", body: #"{"latency_ms": 500}"#)
        let scratch = try Scratch()
        let daemon = try DaemonProcess(config: try scratch.writeConfig(baseURL: server.baseURL, interval: "1h"), in: scratch)
        #expect(try await eventually { try await postCount(scratch.database) > 0 }, "\(daemon.log)")

        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
        #expect(daemon.process.terminationStatus == 0)
        let events = daemon.log.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("event=") }.map { String($0.dropFirst(6)) }
        }
        // The scheduler ends its sync first; only then does the heartbeat remove the record and
        // release the leases, and the store closes last.
        let ended = events.firstIndex { $0 == "sync_cancelled" || $0 == "sync_done" }
        let left = events.firstIndex(of: "left")
        #expect(ended != nil && left != nil && ended! < left!, "\(events)")
        #expect(events.last == "stopped", "\(events)")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM daemon") == "0")
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
    }

    /// A daemon whose every thread of the task pool is busy in a sync that ignores cancellation
    /// (the test hook spins for 120 s, as a long synchronous parse does).
    func makeBusyDaemon(_ scratch: Scratch, _ server: ReferenceServer, environment: [String: String] = [:]) throws -> DaemonProcess {
        // One more busy sync than the machine has cores, so the cooperative pool has no free thread.
        let busy = ProcessInfo.processInfo.activeProcessorCount + 1
        let catalog = repository.appendingPathComponent("Fixtures/videos/catalog.json").path
        let extra = (1..<busy).map { n in
            """
            , {"name": "busy\(n)", "interval": "1h",
               "posts": {"integration": "httpapi", "baseURL": "\(server.baseURL)", "username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD"},
               "videos": {"integration": "mockvideohost", "catalog": "\(catalog)"}}
            """
        }.joined()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1h", extraFeeds: extra,
                                             daemon: #"{"concurrency": \#(min(64, busy))}"#)
        return try DaemonProcess(config: config, in: scratch,
                                 environment: environment.merging(["FEEDSYNC_TEST_BUSY_SYNC_SECONDS": "120"]) { mine, _ in mine },
                                 arguments: ["--log-level", "debug"])
    }

    /// Waits until a busy sync runs on every thread of the pool (the one left over cannot start).
    func waitUntilBusy(_ daemon: DaemonProcess) async throws {
        let busy = ProcessInfo.processInfo.activeProcessorCount
        #expect(try await eventually { daemon.log.components(separatedBy: "event=sync_start").count - 1 >= busy }, "\(daemon.log)")
        // The CPU it burns says the spinning is under way (a tick is 10 ms).
        let before = daemon.cpuTicks
        #expect(try await eventually { daemon.cpuTicks - before >= 50 })
    }

    @Test func aSecondSIGTERMEndsADaemonBusyInCPUBoundWorkAtOnce() async throws {
        let server = try ReferenceServer(posts: 10)
        let scratch = try Scratch()
        // The stop deadline moved out of the way (test hook): only the second signal can end it soon.
        let daemon = try makeBusyDaemon(scratch, server, environment: ["FEEDSYNC_TEST_STOP_DEADLINE_SECONDS": "300"])
        try await waitUntilBusy(daemon)

        daemon.signal(SIGTERM)
        #expect(try await eventually { daemon.log.contains("event=stopping") }, "the first signal is seen: \(daemon.log)")
        daemon.signal(SIGTERM)
        // At once: a bound generous for a loaded machine, far below the 120 s the syncs spin.
        #expect(await daemon.exits(), "\(daemon.log)")
        #expect(daemon.log.contains("event=stopped_immediately"))
        #expect(!daemon.log.contains("event=stop_deadline_passed"))
    }

    @Test func oneSIGTERMStopsADaemonBusyInCPUBoundWorkWithinTheBound() async throws {
        let server = try ReferenceServer(posts: 10)
        let scratch = try Scratch()
        let daemon = try makeBusyDaemon(scratch, server)
        try await waitUntilBusy(daemon)

        let stopping = Date()
        daemon.signal(SIGTERM)
        // The manual's bound (docs/daemon.md): the syncs ignore cancellation, so the stop deadline ends the process.
        #expect(await daemon.exits(), "\(daemon.log)")
        #expect(Date().timeIntervalSince(stopping) > 4, "it gave the syncs their time first")
        #expect(daemon.process.terminationStatus == 0)
        #expect(daemon.log.contains("event=stop_deadline_passed"), "\(daemon.log)")
    }
}
