import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `feedsyncd` as a real process against the reference server as a real process, with real signals.
@Suite struct DaemonEndToEndTests {
    @Test func appendedPostsArriveWithinTheIntervalPlusASecondAndSIGTERMExitsZero() async throws {
        let server = try ReferenceServer(posts: 100)
        let scratch = try Scratch()
        let daemon = try DaemonProcess(config: try scratch.writeConfig(baseURL: server.baseURL, interval: "1s"), in: scratch)

        #expect(try await eventually { try await postCount(scratch.database) == 100 }, "\(daemon.log)")
        try await server.control("POST", "/_control/append?count=5")
        #expect(try await eventually(within: 2.1) { try await postCount(scratch.database) == 105 })

        let status = try await feedsync(["status", "--config", scratch.folder.appendingPathComponent("feedsync.json").path, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let heartbeat = report?["daemon"] as? [String: Any]
        #expect(heartbeat?["pid"] as? Int == Int(daemon.pid) && heartbeat?["running"] as? Bool == true, "\(status.stdout)")

        let stopping = Date()
        daemon.signal(SIGTERM)
        // The README's bound, on this 2-core machine under the whole suite's load.
        #expect(await daemon.exits(within: 8))
        #expect(daemon.process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(stopping) < 8)
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
        try await server.control("POST", "/_control/faults", body: #"{"latency_ms": 50}"#)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, pageSize: 100, interval: "1h")
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually(within: 10) { try await postCount(scratch.database) >= 500 })

        let stopping = Date()
        daemon.signal(SIGTERM)
        // The README's bound, on this 2-core machine under the whole suite's load.
        #expect(await daemon.exits(within: 8))
        #expect(daemon.process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(stopping) < 8)
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
        let stored = try await postCount(scratch.database)
        #expect(stored < 20_000, "the sync was interrupted part way")
        // Post n is change n of the log, so a cursor that matches the committed pages equals the count.
        #expect(try await sqlite(scratch.database, "SELECT cursor FROM feeds WHERE name = 'home'") == String(stored))

        try await server.control("POST", "/_control/faults", body: "{}")
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.stdout.hasPrefix("home: \(20_000 - stored) new, 0 updated"), "\(pull.stdout) \(pull.stderr)")
        #expect(try await storedPosts(scratch.database) == server.snapshot())
    }

    @Test func aPullWhileTheDaemonSyncsNeitherCorruptsNorIsCorrupted() async throws {
        let server = try ReferenceServer(posts: 3000)
        try await server.control("POST", "/_control/faults", body: #"{"latency_ms": 5}"#)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1s")
        let daemon = try DaemonProcess(config: config, in: scratch)
        try await Task.sleep(for: .milliseconds(300))

        async let pulled = feedsync(["pull", "--config", config, "--wait", "30"])
        try await server.control("POST", "/_control/append?count=20")
        let pull = try await pulled

        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(try await eventually(within: 10) { try await postCount(scratch.database) == 3020 })
        daemon.signal(SIGTERM)
        #expect(await daemon.exits(within: 5))
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
        #expect(try await storedPosts(scratch.database) == server.snapshot())
    }

    @Test func aPullThatCannotHaveTheStoreExits75NamingTheHolder() async throws {
        // Half a second a page: the daemon holds the store for most of a minute, so a loaded suite
        // cannot let it finish before the pull below starts.
        let server = try ReferenceServer(posts: 10_000)
        try await server.control("POST", "/_control/faults", body: #"{"latency_ms": 500}"#)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1h")
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually(within: 10) { try await postCount(scratch.database) > 0 })

        let pull = try await feedsync(["pull", "--config", config, "--wait", "0"])

        #expect(pull.status == 75, "\(pull.stdout) \(pull.stderr)")
        #expect(pull.stderr.contains("pid \(daemon.pid) (feedsyncd) holds it"), "\(pull.stderr)")
        #expect(pull.stderr.split(separator: "\n").count == 1)
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
        let daemon = try DaemonProcess(config: config, in: scratch)

        try await Task.sleep(for: .seconds(5))
        let requests = try await server.control("GET", "/_control/requests")["requests"] as? [[String: Any]] ?? []
        let times = requests.compactMap { $0["t"] as? Double }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        // Failure n waits 0.5 s × 2^(n-1), capped at 2 s, times a jitter in [0.5, 1].
        #expect(gaps.count >= 3, "\(gaps)")
        #expect(gaps.first.map { $0 <= 0.6 } == true, "\(gaps)")
        #expect(gaps.dropFirst(2).allSatisfy { (0.9...2.6).contains($0) }, "later gaps are longer, and capped (2 s plus scheduling slack): \(gaps)")
        #expect(daemon.log.contains("event=sync_failed feed=home failures=3"))

        try await server.control("POST", "/_control/faults", body: "{}")
        #expect(try await eventually(within: 4) { try await postCount(scratch.database) == 30 }, "\(daemon.log)")
        #expect(daemon.process.isRunning)
    }

    @Test func anIdleDaemonUsesNoCPUBetweenPolls() async throws {
        let server = try ReferenceServer(posts: 20)
        let scratch = try Scratch()
        let daemon = try DaemonProcess(config: try scratch.writeConfig(baseURL: server.baseURL, interval: "1h"), in: scratch)
        #expect(try await eventually { try await postCount(scratch.database) == 20 })
        try await Task.sleep(for: .milliseconds(500))

        let before = daemon.cpuTicks
        try await Task.sleep(for: .seconds(3))
        let used = daemon.cpuTicks - before

        #expect(before >= 0)
        #expect(used <= 1, "used \(used) ticks of CPU in 3 idle seconds")
    }

    @Test func systemdIsToldWhenTheDaemonIsReadyAndWhenItStops() async throws {
        let server = try ReferenceServer(posts: 10)
        let scratch = try Scratch()
        let socket = try NotifySocket(path: scratch.folder.appendingPathComponent("notify").path)
        let daemon = try DaemonProcess(config: try scratch.writeConfig(baseURL: server.baseURL, interval: "1h"), in: scratch,
                                       environment: ["NOTIFY_SOCKET": socket.path])

        #expect(try await eventually { socket.received.contains { $0.hasPrefix("READY=1") } })
        daemon.signal(SIGTERM)
        #expect(await daemon.exits(within: 5))
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
