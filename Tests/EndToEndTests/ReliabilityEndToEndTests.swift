import Foundation
import ProcessTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Crashes, faults and bad input against real processes: the cache ends at the server's state.
@Suite(.endToEnd) struct ReliabilityEndToEndTests {
    @Test func fiftySIGKILLsDuringASyncWithEditsAndDeletionsLoseNothing() async throws {
        let server = try ReferenceServer(posts: 20_000, seed: 5)
        // Slow pages down a little, so that every run is killed part way through its work.
        try await server.control("POST", "/_control/faults", body: #"{"latency_ms": 10}"#)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, pageSize: 50)
        var random = SeededRandom(state: 4242)
        var kills = 0, runs = 0, highest = 20_000

        while kills < 50 && runs < 400 {
            runs += 1
            let pull = Process()
            pull.executableURL = binaries.appendingPathComponent("feedsync")
            pull.arguments = ["pull", "--config", config, "--wait", "5"]
            pull.environment = ProcessInfo.processInfo.environment.merging(["FEEDSYNC_PASSWORD": "demo"]) { _, new in new }
            pull.standardOutput = FileHandle.nullDevice
            pull.standardError = FileHandle.nullDevice
            try launch(pull)
            try await Task.sleep(for: .milliseconds(20 + random.next(below: 100)))
            if pull.isRunning {
                kill(pull.processIdentifier, SIGKILL)
                kills += 1
            }
            while pull.isRunning { try await Task.sleep(for: .milliseconds(5)) }
            // Meanwhile the feed moves on: new posts (a few pages of them), an edit and a deletion.
            let count = 100 + random.next(below: 200)
            try await server.control("POST", "/_control/append?count=\(count)")
            highest += count
            _ = try? await server.control("POST", "/_control/edit?id=\(String(format: "p%07d", 1 + random.next(below: highest)))")
            _ = try? await server.control("POST", "/_control/delete?id=\(String(format: "p%07d", 1 + random.next(below: highest)))")
        }

        #expect(kills == 50, "\(kills) kills in \(runs) runs")
        try await server.control("POST", "/_control/faults", body: "{}")
        let last = try await feedsync(["pull", "--config", config])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
        #expect(try await storedPosts(scratch.database) == server.snapshot(), "after \(kills) kills in \(runs) runs")
    }

    @Test func aSoakWithThirtyPercentFaultsConvergesToTheExactServerState() async throws {
        let server = try ReferenceServer(posts: 20_000, seed: 6)
        try await server.control("POST", "/_control/faults", body: """
            {"error_rate": 0.12, "error_status": 503, "truncate_rate": 0.06, "malformed_rate": 0.06, "reset_rate": 0.06,
             "rate_limit_every": 25, "retry_after": 0}
            """)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, pageSize: 500)

        var attempts = 0, last = Finished(status: -1, stdout: "", stderr: "")
        while last.status != 0 && attempts < 25 {
            attempts += 1
            last = try await feedsync(["pull", "--config", config])
            #expect([0, 69].contains(last.status), "a pull under faults either finishes or gives up as unavailable: \(last.stderr)")
            if attempts == 3 {
                try await server.control("POST", "/_control/append?count=50")
                try await server.control("POST", "/_control/edit?id=p0000010")
                try await server.control("POST", "/_control/delete?id=p0000020")
            }
        }

        #expect(last.status == 0, "converged within \(attempts) pulls")
        let stats = try await server.stats()
        let faulted = stats.byPath.values.reduce(0) { $0 + $1.filter { $0.key != "200" && $0.key != "304" }.values.reduce(0, +) }
        #expect(faulted > 5, "the faults really happened: \(stats.byPath)")
        if attempts < 3 {   // the mutations above were not made yet
            try await server.control("POST", "/_control/append?count=50")
            #expect(try await feedsync(["pull", "--config", config]).status == 0)
        }
        try await server.control("POST", "/_control/faults", body: "{}")
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        #expect(try await storedPosts(scratch.database) == server.snapshot())
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
    }

    @Test func aRequestQuotaIsPacedByTheRateLimitHeadersWithoutA429() async throws {
        let server = try ReferenceServer(posts: 2000)
        try await server.control("POST", "/_control/faults", body: #"{"quota": 3, "quota_window": 1.5}"#)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, pageSize: 400)
        let started = Date()

        let result = try await feedsync(["pull", "--config", config])

        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("home: 2000 new"), "\(result.stdout)")
        let stats = try await server.stats()
        #expect(!stats.byPath.values.contains { $0["429"] != nil }, "paced, never refused: \(stats.byPath)")
        #expect(stats.total == 6, "a login and five pages")
        #expect(Date().timeIntervalSince(started) > 1.4, "six requests at three per 1.5 s waited for a reset")
    }

    @Test func badConfigsExit78NamingTheKeyAndTouchNoDatabase() async throws {
        let scratch = try Scratch()
        let good = try String(contentsOfFile: try scratch.writeConfig(baseURL: "http://127.0.0.1:9"), encoding: .utf8)
        let cases: [(String, String)] = [
            ("{ not json", "is not valid JSON"),
            (good.replacingOccurrences(of: "\"httpapi\"", with: "\"httpappi\""), "unknown integration \"httpappi\""),
            (good.replacingOccurrences(of: "\"pageSize\": 100", with: "\"pageSize\": \"100\""), "pageSize: expected a whole number, found \"100\""),
            (good.replacingOccurrences(of: "\"pageSize\": 100", with: "\"pageSize\": 0"), "pageSize: 0 is out of range"),
            (good.replacingOccurrences(of: "\"interval\": \"5m\"", with: "\"interval\": \"-5m\""), "interval: \"-5m\" must be longer than zero"),
            (good.replacingOccurrences(of: "\"username\"", with: "\"usernme\""), "username: is required; \"usernme\" looks like a misspelling of it"),
            (good.replacingOccurrences(of: "FEEDSYNC_PASSWORD", with: "FEEDSYNC_NOT_SET"), "environment variable FEEDSYNC_NOT_SET is not set or empty"),
        ]
        let path = scratch.folder.appendingPathComponent("feedsync.json").path
        for (json, expected) in cases {
            try Data(json.utf8).write(to: URL(fileURLWithPath: path))
            let result = try await feedsync(["pull", "--config", path])
            #expect(result.status == 78, "\(expected): \(result.stderr)")
            #expect(result.stderr.contains(expected) && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        let missing = try await feedsync(["pull", "--config", scratch.folder.appendingPathComponent("nope.json").path])
        #expect(missing.status == 78 && missing.stderr.contains("nope.json: no such file"))
        #expect(!FileManager.default.fileExists(atPath: scratch.database.path))
    }

    @Test func tokensAppearInNoOutputLogOrError() async throws {
        let server = try ReferenceServer(posts: 40)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1s")
        var outputs = [try await feedsync(["pull", "--config", config])]
        let daemon = try DaemonProcess(config: config, in: scratch, arguments: ["--log-level", "debug"])
        try await Task.sleep(for: .seconds(1.5))
        try await server.control("POST", "/_control/faults", body: #"{"error_rate": 1.0, "error_status": 401}"#)
        outputs.append(try await feedsync(["pull", "--config", config, "--wait", "120"]))
        try await Task.sleep(for: .seconds(1.5))
        daemon.signal(SIGTERM)
        _ = await daemon.exits()
        outputs += [try await feedsync(["status", "--config", config, "--json"]), try await feedsync(["posts", "--config", config, "--json"])]

        let tokens = try await storedTokens(scratch)
        #expect(tokens.count == 2 && tokens.allSatisfy { $0.count >= 16 })
        #expect(outputs[1].status == 77, "\(outputs[1].stderr)")
        let everything = outputs.map { $0.stdout + $0.stderr }.joined() + daemon.log
        for secret in tokens + ["demo-password-not-used"] { #expect(!everything.contains(secret)) }
        let published = databaseBytes(scratch)
        for secret in tokens { #expect(published.range(of: Data(secret.utf8)) == nil, "a token is in the database or its WAL") }
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM sync_runs WHERE error LIKE '%401%'") != "0")
    }
}
