import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The live Bluesky mirror over time, `feedsyncd` and the fake Jetstream both real processes:
/// the follow set read again while connected, identity events, the `time_us` a restart resumes
/// from, and SIGHUP turning `stream` on and off.
@Suite(.endToEnd, .serialized) struct BlueskyLiveLifecycleEndToEndTests {
    static let ada = BlueskyLiveEndToEndTests.ada
    static let grace = BlueskyLiveEndToEndTests.grace
    static let environment = ["BLUESKY_APP_PASSWORD": "app-pass-word"]

    /// The config, written over the last one; the feed polls once an hour, so what arrives within seconds came through the stream.
    @discardableResult
    func writeConfig(_ scratch: Scratch, _ server: ReferenceServer, stream: Bool = true, extra: String = "") throws -> String {
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "sky", "interval": "1h", "posts": {"integration": "bluesky", "service": "\(server.baseURL)",
              "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home", "stream": \(stream),
              "jetstreamURL": "ws://127.0.0.1:\(server.port)/subscribe"\(extra)}}]}
            """
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    func storedIDs(_ scratch: Scratch) async throws -> Set<String> {
        Set(try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = 'sky'").split(separator: "\n").map(String.init))
    }

    func caughtUp(_ daemon: DaemonProcess, times: Int = 1) async throws -> Bool {
        try await eventually { daemon.log.components(separatedBy: "event=live_caught_up").count - 1 >= times }
    }

    func subscriptions(_ server: ReferenceServer) async throws -> [[String: Any]] {
        try await server.control("GET", "/_jetstream/subscriptions")["subscriptions"] as? [[String: Any]] ?? []
    }

    func connectionPaths(_ server: ReferenceServer) async throws -> [String] {
        try await subscriptions(server).compactMap { $0["path"] as? String }
    }

    func lastUpdate(_ server: ReferenceServer) async throws -> Set<String>? {
        let update = try await subscriptions(server).last { $0["options_update"] != nil }?["options_update"] as? [String: Any]
        return (update?["wantedDids"] as? [String]).map(Set.init)
    }

    @Test func theFollowSetIsReadAgainWhileConnectedAndFollowsAndUnfollowsTakeEffect() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "20"])
        let scratch = try Scratch()
        let daemon = try DaemonProcess(config: try writeConfig(scratch, server, extra: #", "subscriptionRefreshSeconds": 10"#), in: scratch,
                                       environment: Self.environment)
        #expect(try await caughtUp(daemon), "\(daemon.log)")

        try await server.control("POST", "/_jetstream/follow?did=did:plc:newcomer&handle=newcomer.test")
        #expect(try await eventually { try await lastUpdate(server)?.contains("did:plc:newcomer") == true },
                "the new follow goes out as an options_update within the refresh: \(daemon.log)")
        let post = try await server.control("POST", "/_jetstream/post?did=did:plc:newcomer")
        #expect(try await eventually { try await storedIDs(scratch).contains(post["uri"] as? String ?? "?") }, "\(daemon.log)")

        try await server.control("POST", "/_jetstream/follow?did=\(Self.ada)&on=0")
        #expect(try await eventually { try await lastUpdate(server).map { !$0.contains(Self.ada) } == true },
                "the unfollow goes out too: \(daemon.log)")
        // Sent past every filter, as a server may: the unfollowed account's event is ignored.
        let ignored = try await server.control("POST", "/_jetstream/post?did=\(Self.ada)&everyone=1")
        let marker = try await server.control("POST", "/_jetstream/post?did=\(Self.grace)")
        #expect(try await eventually { try await storedIDs(scratch).contains(marker["uri"] as? String ?? "?") }, "\(daemon.log)")
        #expect(try await !storedIDs(scratch).contains(ignored["uri"] as? String ?? "?"))
        #expect(try await connectionPaths(server).count == 1, "all of it on the one connection, never reconnected")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func aPostDeletedOnTheStreamTakesAlongTheRepostsAPollStored() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "40"])
        let scratch = try Scratch()
        let daemon = try DaemonProcess(config: try writeConfig(scratch, server), in: scratch, environment: Self.environment)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        let timeline = Set(try await server.control("GET", "/_control/timeline")["ids"] as? [String] ?? [])
        #expect(try await eventually { try await storedIDs(scratch) == timeline }, "\(daemon.log)")
        let original = try await sqlite(scratch.database, "SELECT repost_of FROM posts WHERE feed = 'sky' AND repost_of IS NOT NULL LIMIT 1")
        #expect(!original.isEmpty, "the first sync stored a repost")

        try await server.control("POST", "/_jetstream/delete?uri=\(original)")
        #expect(try await eventually {
            try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE feed = 'sky' AND (id = '\(original)' OR repost_of = '\(original)')") == "0"
        }, "\(daemon.log)")
        let after = Set(try await server.control("GET", "/_control/timeline")["ids"] as? [String] ?? [])
        #expect(try await storedIDs(scratch) == after, "exactly what a poll would now list")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func anIdentityEventRenamesTheStoredAuthorAndARestartResumesFromTheCommittedTimeUs() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "20"])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server)
        let daemon = try DaemonProcess(config: config, in: scratch, environment: Self.environment)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        let post = try await server.control("POST", "/_jetstream/post?did=\(Self.ada)")
        let uri = try #require(post["uri"] as? String)
        #expect(try await eventually { try await storedIDs(scratch).contains(uri) }, "\(daemon.log)")

        try await server.control("POST", "/_jetstream/identity?did=\(Self.ada)&handle=lovelace.test")
        #expect(try await eventually {
            try await sqlite(scratch.database, "SELECT handle FROM users WHERE feed = 'sky' AND id = '\(Self.ada)'") == "lovelace.test"
        }, "\(daemon.log)")
        #expect(try await sqlite(scratch.database, "SELECT DISTINCT author_handle FROM posts WHERE feed = 'sky' AND author_id = '\(Self.ada)'")
                == "lovelace.test", "every stored post of theirs shows it")

        // The last event's time_us is committed with the page it produced.
        let stored = try await sqlite(scratch.database, "SELECT stream_position FROM feeds WHERE name = 'sky'")
        let position = try #require(Int64(stored), "a time_us is stored: \(stored)")
        let events = try await server.control("GET", "/_jetstream/stats")["events"] as? Int ?? 0
        #expect(events >= 2 && position > 1_700_000_000_000_000)
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())

        // A new daemon resumes the stream there, rewound 5 s.
        let before = try await connectionPaths(server).count
        let restarted = try DaemonProcess(config: config, in: scratch, environment: Self.environment)
        #expect(try await caughtUp(restarted), "\(restarted.log)")
        let paths = try await connectionPaths(server)
        #expect(paths.count == before + 1)
        #expect(paths.last?.contains("cursor=\(position - 5_000_000)") == true, "\(paths.last ?? "")")
        restarted.signal(SIGTERM)
        #expect(await restarted.stopsInTime())
    }

    /// A position stored days ago (the feed's `stream` was off meanwhile) resumes an hour back,
    /// not from everything Jetstream keeps.
    @Test func aPositionStoredDaysAgoResumesAnHourBackAtMost() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "5"])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server)
        let daemon = try DaemonProcess(config: config, in: scratch, environment: Self.environment)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
        let daysAgo = Int64((Date().timeIntervalSince1970 - 3 * 86_400) * 1_000_000)
        _ = try await sqlite(scratch.database, "UPDATE feeds SET stream_position = '\(daysAgo)' WHERE name = 'sky'")

        let started = Int64(Date().timeIntervalSince1970 * 1_000_000)
        let restarted = try DaemonProcess(config: config, in: scratch, environment: Self.environment)
        #expect(try await caughtUp(restarted), "\(restarted.log)")
        let path = try #require(try await connectionPaths(server).last)
        let cursor = try #require(URLComponents(string: path)?.queryItems?.first { $0.name == "cursor" }?.value.flatMap { Int64($0) }, "\(path)")
        let hour: Int64 = 3_600_000_000, rewind: Int64 = 5_000_000
        #expect(cursor >= started - hour - rewind && cursor <= Int64(Date().timeIntervalSince1970 * 1_000_000) - hour, "\(path)")
        restarted.signal(SIGTERM)
        #expect(await restarted.stopsInTime())
    }

    @Test func SIGHUPTurnsTheStreamOnAndOffAndSIGTERMClosesWithACloseFrame() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "20"])
        let scratch = try Scratch()
        let daemon = try DaemonProcess(config: try writeConfig(scratch, server, stream: false), in: scratch, environment: Self.environment)
        let timeline = Set(try await server.control("GET", "/_control/timeline")["ids"] as? [String] ?? [])
        #expect(try await eventually { try await storedIDs(scratch) == timeline }, "polled: \(daemon.log)")
        #expect(try await connectionPaths(server).isEmpty, "a feed without \"stream\" opens no stream")

        try writeConfig(scratch, server, stream: true)
        daemon.signal(SIGHUP)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        #expect(try await server.control("GET", "/_jetstream/stats")["open"] as? Int == 1)
        let live = try await server.control("POST", "/_jetstream/post?did=\(Self.grace)")
        #expect(try await eventually { try await storedIDs(scratch).contains(live["uri"] as? String ?? "?") }, "\(daemon.log)")

        try writeConfig(scratch, server, stream: false)
        daemon.signal(SIGHUP)
        #expect(try await eventually { try await server.control("GET", "/_jetstream/stats")["open"] as? Int == 0 }, "\(daemon.log)")
        #expect(try await server.control("GET", "/_jetstream/stats")["close_codes"] as? [Int] == [1001], "closed with a close frame")
        let unheard = try await server.control("POST", "/_jetstream/post?did=\(Self.grace)")
        try await Task.sleep(for: .seconds(2))
        #expect(try await !storedIDs(scratch).contains(unheard["uri"] as? String ?? "?"), "no stream any more; the next poll brings it")
        #expect(try await connectionPaths(server).count == 1, "not reconnected")

        try writeConfig(scratch, server, stream: true)
        daemon.signal(SIGHUP)
        #expect(try await caughtUp(daemon, times: 2), "\(daemon.log)")
        #expect(try await eventually { try await storedIDs(scratch).contains(unheard["uri"] as? String ?? "?") },
                "the catch-up on connecting fills the gap")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime(), "within the stop bound")
        #expect(try await server.control("GET", "/_jetstream/stats")["close_codes"] as? [Int] == [1001, 1001], "SIGTERM sends a close frame too")
    }
}
