import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `feedsyncd` as a real process against the reference server as a real process, with real signals.
@Suite(.endToEnd) struct DaemonEndToEndTests {
    /// The scheduled delays the daemon logs (`sync_scheduled … in_s=`), in order: its own plan.
    func scheduledDelays(_ log: String) -> [Double] {
        log.split(separator: "\n").filter { $0.contains("event=sync_scheduled feed=home ") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("in_s=") }.flatMap { Double($0.dropFirst(5)) }
        }
    }

    @Test func appendedPostsArriveOnTheNextPollOneIntervalLaterAndSIGTERMExitsZero() async throws {
        let server = try ReferenceServer(posts: 100)
        let scratch = try Scratch()
        let daemon = try DaemonProcess(config: try scratch.writeConfig(baseURL: server.baseURL, interval: "1s"), in: scratch,
                                       arguments: ["--log-level", "debug"])

        #expect(try await eventually { try await postCount(scratch.database) == 100 }, "\(daemon.log)")
        try await server.control("POST", "/_control/append?count=5")
        #expect(try await eventually { try await postCount(scratch.database) == 105 })
        // Polled on its interval, as the daemon plans it: 1 s ± 10% after each success.
        let delays = scheduledDelays(daemon.log)
        #expect(!delays.isEmpty && delays.allSatisfy { (0.9...1.1).contains($0) }, "\(delays)")

        let status = try await feedsync(["status", "--config", scratch.folder.appendingPathComponent("feedsync.json").path, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let heartbeat = report?["daemon"] as? [String: Any]
        #expect(heartbeat?["pid"] as? Int == Int(daemon.pid) && heartbeat?["running"] as? Bool == true, "\(status.stdout)")

        daemon.signal(SIGTERM)
        // The manual's bound (docs/daemon.md), as the daemon keeps it: it stopped before its own stop deadline.
        #expect(await daemon.stopsInTime(), "\(daemon.log)")
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM daemon") == "0", "a clean stop clears the heartbeat")
        #expect(daemon.log.contains("event=sync_done feed=home new=100"))
    }

    @Test func aBrokenConfigOnSIGHUPIsRefusedAndTheDaemonKeepsSyncing() async throws {
        let server = try ReferenceServer(posts: 50)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1s")
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { try await postCount(scratch.database) == 50 })

        try Data(#"{"feeds": [{"name": "home", "interval": "-1m"}]}"#.utf8).write(to: URL(fileURLWithPath: config))
        daemon.signal(SIGHUP)
        #expect(try await eventually { daemon.log.contains("event=reload_failed") })
        try await server.control("POST", "/_control/append?count=7")

        #expect(try await eventually { try await postCount(scratch.database) == 57 })
        #expect(daemon.process.isRunning)
        #expect(daemon.log.contains("feeds[0].interval"), "the log names the bad key: \(daemon.log)")
    }

    @Test func aFeedAddedOnSIGHUPStartsSyncing() async throws {
        let server = try ReferenceServer(posts: 40), second = try ReferenceServer(posts: 25, seed: 9)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1s")
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { try await postCount(scratch.database) == 40 })

        let catalog = repository.appendingPathComponent("Fixtures/videos/catalog.json").path
        _ = try scratch.writeConfig(baseURL: server.baseURL, interval: "1s", extraFeeds: """
            , {"name": "second", "interval": "1s",
               "posts": {"integration": "httpapi", "baseURL": "\(second.baseURL)", "username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD"},
               "videos": {"integration": "mockvideohost", "catalog": "\(catalog)"}}
            """)
        daemon.signal(SIGHUP)

        #expect(try await eventually { try await postCount(scratch.database, feed: "second") == 25 }, "\(daemon.log)")
        #expect(daemon.log.contains("event=feed_added feed=second"))
    }

    @Test func SIGTERMDuringALargeSyncLeavesACursorThatMatchesTheCommittedPages() async throws {
        let server = try ReferenceServer(posts: 20_000)
        // Five pages answered, the sixth held: the signal lands while the sync waits for it.
        try await server.hold(after: 5)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, pageSize: 100, interval: "1h")
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually {
            let (held, stored) = (try await server.held(), try await postCount(scratch.database))
            return held == 1 && stored == 500
        }, "\(daemon.log)")

        daemon.signal(SIGTERM)
        // The manual's bound (docs/daemon.md), as the daemon keeps it: it stopped before its own stop deadline.
        #expect(await daemon.stopsInTime(), "\(daemon.log)")
        #expect(daemon.log.contains("event=sync_cancelled feed=home"), "\(daemon.log)")
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
        #expect(try await postCount(scratch.database) == 500, "the five committed pages, nothing of the held one")
        // Post n is change n of the log, so a cursor that matches the committed pages equals the count.
        #expect(try await sqlite(scratch.database, "SELECT cursor FROM feeds WHERE name = 'home'") == "500")

        try await server.release()
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.stdout.hasPrefix("home: 19500 new, 0 updated"), "\(pull.stdout) \(pull.stderr)")
        #expect(try await storedPosts(scratch.database) == server.snapshot())
    }

    @Test func aPullWhileTheDaemonSyncsNeitherCorruptsNorIsCorrupted() async throws {
        let server = try ReferenceServer(posts: 3000)
        try await server.control("POST", "/_control/faults", body: #"{"latency_ms": 5}"#)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1s")
        let daemon = try DaemonProcess(config: config, in: scratch)
        try await Task.sleep(for: .milliseconds(300))

        async let pulled = feedsync(["pull", "--config", config, "--wait", "120"])
        try await server.control("POST", "/_control/append?count=20")
        let pull = try await pulled

        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(try await eventually { try await postCount(scratch.database) == 3020 })
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
        #expect(try await storedPosts(scratch.database) == server.snapshot())
    }

    @Test func aPullThatCannotHaveTheStoreExits75NamingTheHolder() async throws {
        // The daemon's sync is held at its second page, so it holds the store while the pull runs.
        let server = try ReferenceServer(posts: 10_000)
        try await server.hold(after: 1)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1h")
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually {
            let (held, stored) = (try await server.held(), try await postCount(scratch.database))
            return held == 1 && stored > 0
        }, "\(daemon.log)")

        let pull = try await feedsync(["pull", "--config", config, "--wait", "0"])

        #expect(pull.status == 75, "\(pull.stdout) \(pull.stderr)")
        #expect(pull.stderr.contains("pid \(daemon.pid) (feedsyncd) holds it"), "\(pull.stderr)")
        #expect(pull.stderr.split(separator: "\n").count == 1)
        try await server.release()
    }

    @Test func aLockLeftByAKilledProcessIsTakenOverWithAWarning() async throws {
        let server = try ReferenceServer(posts: 10)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        // What a pull killed with SIGKILL leaves behind: its record, without a held flock.
        try Data("pid=999999 holder=feedsync_pull since=2026-01-01T00:00:00Z\n".utf8)
            .write(to: URL(fileURLWithPath: scratch.database.path + ".lock"))

        let pull = try await feedsync(["pull", "--config", config, "--wait", "0"])

        #expect(pull.status == 0)
        #expect(pull.stderr.contains("took over the store lock left behind by process 999999"), "\(pull.stderr)")
    }

    @Test func aFailingFeedBacksOffAndRecoversWhenTheServerDoes() async throws {
        let server = try ReferenceServer(posts: 30)
        try await server.control("POST", "/_control/faults", body: #"{"error_rate": 1.0, "error_status": 503}"#)
        let scratch = try Scratch()
        // One try per sync, so each request the server sees is one sync attempt.
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "0.5s", daemon: #"{"maxBackoff": "2s"}"#,
                                             feedKeys: #""maxAttempts": 1,"#)
        let daemon = try DaemonProcess(config: config, in: scratch, arguments: ["--log-level", "debug"])

        #expect(try await eventually { daemon.log.contains("event=sync_failed feed=home failures=5") }, "\(daemon.log)")
        // Failure n waits 0.5 s × 2^(n-1), capped at 2 s, times a jitter in [0.5, 1]: the
        // daemon's plan, as it logs it (to a tenth of a second).
        let delays = Array(scheduledDelays(daemon.log).prefix(5))
        let ceilings = [0.5, 1, 2, 2, 2]
        #expect(delays.count == 5 && zip(delays, ceilings).allSatisfy { delay, ceiling in
            delay >= ceiling / 2 - 0.05 && delay <= ceiling + 0.05
        }, "\(delays)")
        // And the server saw the plan kept: no retry came sooner than planned (a busy machine
        // can only make the gaps longer).
        let requests = try await server.control("GET", "/_control/requests")["requests"] as? [[String: Any]] ?? []
        let times = requests.compactMap { $0["t"] as? Double }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.count >= 4 && zip(gaps, delays).allSatisfy { $0 >= $1 - 0.06 }, "gaps \(gaps), planned \(delays)")

        try await server.control("POST", "/_control/faults", body: "{}")
        #expect(try await eventually { try await postCount(scratch.database) == 30 }, "\(daemon.log)")
        #expect(daemon.process.isRunning)
    }

    @Test func anIdleDaemonUsesNoCPUBetweenPolls() async throws {
        let server = try ReferenceServer(posts: 20)
        let scratch = try Scratch()
        // The heartbeat every hour, so that only polling, were there any, would use the CPU.
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1h", daemon: #"{"heartbeat": "1h"}"#)
        let daemon = try DaemonProcess(config: config, in: scratch, arguments: ["--log-level", "debug"])
        // Scheduling the next sync is the last thing a sync does.
        #expect(try await eventually { daemon.log.contains("event=sync_scheduled feed=home") }, "\(daemon.log)")
        #expect(try await postCount(scratch.database) == 20)

        let before = (ticks: daemon.cpuTicks, blockings: daemon.blockings)
        try await Task.sleep(for: .seconds(3))
        let used = daemon.cpuTicks - before.ticks
        let wakeups = DaemonProcess.wakeups(from: before.blockings, to: daemon.blockings)

        #expect(before.ticks >= 0 && !before.blockings.isEmpty)
        #expect(used <= 1, "used \(used) ticks of CPU in 3 idle seconds")
        // Nothing polls: with no "media" and no webhooks their services wait for a reload, not a
        // timer (they woke 108 times in these 3 s when they polled). What is left is the Dispatch
        // runtime's own timer, once a second.
        #expect(wakeups <= 10, "woke \(wakeups) times in 3 idle seconds")
    }

    @Test func systemdIsToldWhenTheDaemonIsReadyAndWhenItStops() async throws {
        let server = try ReferenceServer(posts: 10)
        let scratch = try Scratch()
        let socket = try NotifySocket(path: scratch.folder.appendingPathComponent("notify").path)
        let daemon = try DaemonProcess(config: try scratch.writeConfig(baseURL: server.baseURL, interval: "1h"), in: scratch,
                                       environment: ["NOTIFY_SOCKET": socket.path])

        #expect(try await eventually { socket.received.contains { $0.hasPrefix("READY=1") } })
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
        #expect(socket.received.contains("STOPPING=1"), "\(socket.received)")
    }
}

/// A unix datagram socket standing in for systemd's notify socket.
final class NotifySocket: @unchecked Sendable {
    // @unchecked: `messages` is guarded by `lock`; the descriptor is only read.
    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var messages: [String] = []

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw HarnessError("cannot bind \(path)") }
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                lock.lock()
                messages.append(text)
                lock.unlock()
            }
        }
    }

    deinit { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }

    var received: [String] {
        lock.lock()
        defer { lock.unlock() }
        return messages
    }
}
