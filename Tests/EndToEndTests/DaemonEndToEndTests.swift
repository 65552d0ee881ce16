import Foundation
import Testing

/// `feedsyncd` as a real process: it keeps syncing on its interval and stops cleanly on SIGTERM.
@Suite struct DaemonEndToEndTests {
    @Test func theDaemonPicksUpNewPostsAndExitsZeroOnSIGTERM() async throws {
        let server = try ReferenceServer(posts: 100)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1s")
        let daemon = Process()
        daemon.executableURL = binaries.appendingPathComponent("feedsyncd")
        daemon.arguments = ["--config", config]
        daemon.environment = ProcessInfo.processInfo.environment.merging(["FEEDSYNC_PASSWORD": "demo"]) { _, new in new }
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        defer { if daemon.isRunning { daemon.interrupt() } }

        #expect(try await eventually { try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts") == "100" })
        try await server.control("POST", "/_control/append?count=5")
        #expect(try await eventually { try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts") == "105" },
                "appended posts arrive within the interval plus a second")

        let stopping = Date()
        daemon.terminate()
        #expect(await exits(daemon, within: 5))
        #expect(daemon.terminationStatus == 0)
        #expect(Date().timeIntervalSince(stopping) < 5)
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
    }
}

/// Polls `condition` every 100 ms until it holds or `seconds` pass.
func eventually(within seconds: Double = 3, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if (try? await condition()) == true { return true }
        try await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}

/// Whether `process` has exited within `seconds`, checked without blocking a thread.
func exits(_ process: Process, within seconds: Double) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    return !process.isRunning
}
