import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `feedsyncd` following the fake Mastodon server's streaming API, both real processes.
///
/// Every feed here polls once an hour: a change that reaches the store within seconds came
/// through the stream, and the server's request counts confirm no timeline was polled for it.
@Suite(.endToEnd, .serialized) struct MastodonLiveEndToEndTests {
    let token = "tok-live"

    func startServer(statuses: Int = 30) throws -> ReferenceServer {
        try ReferenceServer(script: "Fixtures/mastodon/server.py",
                            arguments: ["--statuses", String(statuses), "--token", token, "--thump", "1"])
    }

    func startDaemon(_ scratch: Scratch, _ server: ReferenceServer, postsKeys: String = #", "stream": true"#) throws -> DaemonProcess {
        let config = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: postsKeys)
        return try DaemonProcess(config: config, in: scratch, environment: ["MASTODON_TOKEN": token])
    }

    func storedIDs(_ scratch: Scratch) async throws -> [String] {
        let rows = try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = 'social' ORDER BY CAST(id AS INTEGER) DESC")
        return rows.isEmpty ? [] : rows.split(separator: "\n").map(String.init)
    }

    func home(_ server: ReferenceServer) async throws -> [String] {
        try await server.control("GET", "/_control/timeline?name=home")["ids"] as? [String] ?? []
    }

    func connects(_ server: ReferenceServer) async throws -> [[String: Any]] {
        try await server.control("GET", "/_control/streams")["connects"] as? [[String: Any]] ?? []
    }

    /// The feed's `live` field in `feedsync status --json`, and the human form's `stream:` line.
    func liveStatus(_ scratch: Scratch) async throws -> (json: String?, text: String) {
        let config = scratch.folder.appendingPathComponent("feedsync.json").path
        let json = try await feedsync(["status", "--config", config, "--json"], environment: ["MASTODON_TOKEN": token])
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let row = (report?["feeds"] as? [[String: Any]])?.first
        let text = try await feedsync(["status", "--config", config], environment: ["MASTODON_TOKEN": token]).stdout
        return (row?["live"] as? String, text)
    }

    func occurrences(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// Waits until the daemon is connected and has caught up `times` times.
    func caughtUp(_ daemon: DaemonProcess, times: Int = 1) async throws -> Bool {
        try await eventually { occurrences("event=live_caught_up", in: daemon.log) >= times }
    }

    @Test func publishedDeletedAndEditedStatusesReachTheStoreThroughTheStream() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        #expect(try await eventually { try await storedIDs(scratch) == home(server) })
        try await server.control("POST", "/_control/reset-stats")

        let published = try await server.control("POST", "/_control/post?count=1")
        #expect(published["streamed"] as? Int == 1, "one open stream received it")
        let id = try #require((published["ids"] as? [String])?.first)
        #expect(try await eventually { try await storedIDs(scratch).first == id }, "\(daemon.log)")

        try await server.control("POST", "/_control/edit?id=\(id)")
        #expect(try await eventually {
            try await sqlite(scratch.database, "SELECT text LIKE '%Edit 1:%' AND edited_at IS NOT NULL FROM posts WHERE id = '\(id)'") == "1"
        }, "\(daemon.log)")

        try await server.control("POST", "/_control/delete?id=\(id)")
        #expect(try await eventually { try await !storedIDs(scratch).contains(id) }, "\(daemon.log)")

        let stats = try await server.stats().byPath
        #expect(stats["GET /api/v1/timelines/home"] == nil, "no poll of the timeline delivered these: \(stats)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func statusesPublishedWhileTheStreamIsDroppedAreFilledInWithoutDuplicates() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await caughtUp(daemon), "\(daemon.log)")

        // Reconnects are refused until the statuses are out, so they are certainly published
        // while no stream is open, however soon the daemon would have reconnected.
        try await server.control("POST", "/_control/streaming", body: #"{"refuse": 503}"#)
        let dropped = try await server.control("POST", "/_control/stream-drop")
        #expect(dropped["dropped"] as? Int == 1)
        try #require(try await eventually { try await server.control("GET", "/_control/streams")["open"] as? Int == 0 })
        let away = try await server.control("POST", "/_control/post?count=3")
        #expect(away["streamed"] as? Int == 0, "published while no stream was open")
        try await server.control("POST", "/_control/streaming", body: #"{"refuse": 0}"#)

        #expect(try await caughtUp(daemon, times: 2), "\(daemon.log)")
        let expected = try await home(server)
        #expect(try await eventually { try await storedIDs(scratch) == expected }, "\(daemon.log)")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE feed = 'social'") == String(expected.count))
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func aRefusingStreamIsRetriedWithGrowingWaitsWhileTheFeedIsPolled() async throws {
        let server = try startServer()
        try await server.control("POST", "/_control/streaming", body: #"{"refuse": 503}"#)
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await eventually { try await connects(server).count >= 4 }, "\(daemon.log)")
        // Backoff ceilings 1, 2, 4 s, each waited between half and all of it: the daemon's plan,
        // as it logs it (to a tenth of a second).
        let planned = daemon.log.split(separator: "\n").filter { $0.contains("event=live_disconnected") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("retry_in_s=") }.flatMap { Double($0.dropFirst(11)) }
        }
        #expect(planned.count >= 3 && zip(planned, [1.0, 2, 4]).allSatisfy { $0 >= $1 / 2 - 0.05 && $0 <= $1 + 0.05 }, "\(planned)")
        // The server's own log of stream requests shows the plan kept: no retry came sooner
        // (a busy machine can only make the gaps longer).
        let times = try await connects(server).compactMap { $0["t"] as? Double }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.count >= 3 && zip(gaps, planned).allSatisfy { $0 >= $1 - 0.06 }, "gaps \(gaps), planned \(planned)")
        #expect(try await eventually { try await storedIDs(scratch) == home(server) }, "the feed is still polled")
        #expect(daemon.log.contains("event=live_disconnected"))
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func aStreamAnnouncedOnAnotherHostGetsNoTokenUnlessTheOperatorNamesIt() async throws {
        let server = try startServer()
        let elsewhere = "ws://localhost:\(server.port)"
        try await server.control("POST", "/_control/streaming", body: #"{"announce": "\#(elsewhere)"}"#)
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await eventually { daemon.log.contains("event=live_refused") }, "\(daemon.log)")
        #expect(daemon.log.contains("which is not http://127.0.0.1:\(server.port) or a subdomain of it on the same scheme and port"), "\(daemon.log)")
        #expect(try await connects(server).isEmpty, "no stream request, so no token, went anywhere")
        #expect(try await eventually { try await storedIDs(scratch) == home(server) }, "the feed keeps polling")
        let refused = try await liveStatus(scratch)
        #expect(refused.json?.hasPrefix("polling: the server announces its stream at http://localhost:") == true, "\(refused)")
        #expect(refused.text.contains("  stream:       polling: the server announces"), "\(refused.text)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
        #expect(try await liveStatus(scratch).json == nil, "a stopped daemon follows nothing")

        let trusted = try startDaemon(scratch, server, postsKeys: #", "stream": true, "streamingURL": "\#(elsewhere)""#)
        #expect(try await caughtUp(trusted), "\(trusted.log)")
        #expect(try await connects(server).count == 1)
        #expect(try await eventually { try await liveStatus(scratch).json?.hasPrefix("live since 20") == true })
        trusted.signal(SIGTERM)
        #expect(await trusted.stopsInTime())
    }

    /// A port is another origin: a stream announced on another port of the server's own host is
    /// refused as one on another host is, with one log line, and the feed keeps polling.
    @Test(arguments: ["ws", "http", "wss"])
    func aStreamAnnouncedOnAnotherPortOfTheSameHostGetsNoToken(scheme: String) async throws {
        let server = try startServer()
        let other = try startServer()
        try await server.control("POST", "/_control/streaming", body: #"{"announce": "\#(scheme)://127.0.0.1:\#(other.port)"}"#)
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await eventually { daemon.log.contains("event=live_refused") }, "\(daemon.log)")
        #expect(occurrences("event=live_refused", in: daemon.log) == 1, "\(daemon.log)")
        #expect(daemon.log.contains("which is not http://127.0.0.1:\(server.port)"), "\(daemon.log)")
        #expect(try await eventually { try await storedIDs(scratch) == home(server) }, "the feed keeps polling")
        let (here, there) = (try await connects(server), try await connects(other))
        #expect(here.isEmpty && there.isEmpty, "no stream request, so no token, went anywhere")
        #expect(try await other.control("GET", "/_control/stats")["total_requests"] as? Int == 0, "nothing reached the other port")
        #expect(try await liveStatus(scratch).json?.hasPrefix("polling: the server announces its stream at \(scheme == "wss" ? "https" : "http")://127.0.0.1:\(other.port)") == true)
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func hostileEventsEndInAReconnectAndTheStreamGoesOn() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await caughtUp(daemon), "\(daemon.log)")

        try await server.control("POST", "/_control/stream-event?event=update", body: "not a status")
        #expect(try await caughtUp(daemon, times: 2), "\(daemon.log)")
        #expect(occurrences("is not a status", in: daemon.log) == 1, "\(daemon.log)")

        try await server.control("POST", "/_control/stream-event?event=update&repeat=17", body: String(repeating: "x", count: 1 << 16))
        #expect(try await caughtUp(daemon, times: 3), "\(daemon.log)")
        #expect(occurrences("longer than 1048576 bytes", in: daemon.log) == 1, "\(daemon.log)")

        try await server.control("POST", "/_control/stream-raw", body: "zz\r\ngarbage that is no chunk\r\n")
        #expect(try await caughtUp(daemon, times: 4), "\(daemon.log)")

        let published = try await server.control("POST", "/_control/post?count=1")
        let id = try #require((published["ids"] as? [String])?.first)
        #expect(try await eventually { try await storedIDs(scratch).first == id }, "\(daemon.log)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    /// A status that reads but cannot be mapped is a bad item, as on a polled page: skipped,
    /// logged with its id and reason, and the stream stays open; the stream never moves the
    /// feed's cursor.
    @Test func aStatusThatCannotBeMappedIsSkippedAsAPollSkipsItAndTheStreamGoesOn() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        let cursor = try await sqlite(scratch.database, "SELECT cursor FROM feeds WHERE name = 'social'")

        let account = #"{"id": "1", "username": "ada", "acct": "ada", "display_name": "Ada", "avatar": "https://files.example/a.png"}"#
        try await server.control("POST", "/_control/stream-event?event=update", body: #"{"id": "990000000000000001", "created_at": "yesterday", "#
                                 + #""visibility": "public", "content": "<p>hi</p>", "media_attachments": [], "account": \#(account)}"#)
        let published = try await server.control("POST", "/_control/post?count=1")
        let id = try #require((published["ids"] as? [String])?.first)
        #expect(try await eventually { try await storedIDs(scratch).first == id }, "\(daemon.log)")

        let skipped = daemon.log.components(separatedBy: "\n").filter { $0.contains("event=item_skipped") }
        #expect(skipped.count == 1 && skipped.allSatisfy {
            $0.contains("level=warn") && $0.contains("feed=social id=990000000000000001") && $0.contains(#"created_at \"yesterday\" is not an ISO 8601 time"#)
        }, "\(daemon.log)")
        #expect(occurrences("event=live_caught_up", in: daemon.log) == 1 && occurrences("event=live_disconnected", in: daemon.log) == 0,
                "the stream stayed open: \(daemon.log)")
        #expect(try await !storedIDs(scratch).contains("990000000000000001"))
        #expect(try await sqlite(scratch.database, "SELECT cursor FROM feeds WHERE name = 'social'") == cursor, "the stream left the cursor")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func aBurstOfThousandsOfEventsIsWrittenInBatchesAndArrivesWhole() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "stream": true"#)
        let daemon = try DaemonProcess(config: config, in: scratch, environment: ["MASTODON_TOKEN": token], arguments: ["--log-level", "debug"])
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        try await server.control("POST", "/_control/reset-stats")
        let published = try await server.control("POST", "/_control/post?count=3000")
        #expect(published["streamed"] as? Int == 3000)
        let expected = try await home(server)
        #expect(try await eventually { try await storedIDs(scratch) == expected }, "\(daemon.log.suffix(2000))")
        let stats = try await server.stats().byPath
        #expect(stats["GET /api/v1/timelines/home"] == nil, "all through the stream: \(stats)")
        // Events that queue while a batch commits go into the next transaction together.
        let batches = daemon.log.components(separatedBy: "\n").filter { $0.contains("event=live_written") }
        #expect(batches.count < 3000, "\(batches.count) transactions for 3000 events")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func theLocalPublicTimelineIsPolledAndStreamed() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "stream": true"#)
        try Data(try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: #""timeline": "home""#, with: #""timeline": "public:local""#).utf8)
            .write(to: URL(fileURLWithPath: config))
        let daemon = try DaemonProcess(config: config, in: scratch, environment: ["MASTODON_TOKEN": token])
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        let timeline = { try await server.control("GET", "/_control/timeline?name=public:local")["ids"] as? [String] ?? [] }
        #expect(try await eventually { try await storedIDs(scratch) == timeline() }, "\(daemon.log)")
        try await server.control("POST", "/_control/reset-stats")
        let published = try await server.control("POST", "/_control/post?count=20")
        #expect(published["streamed"] as? Int ?? 0 > 0, "some of 20 statuses are public and local")
        let expected = try await timeline()
        #expect(try await eventually { try await storedIDs(scratch) == expected }, "\(daemon.log)")
        #expect(try await server.stats().byPath["GET /api/v1/timelines/public"] == nil)
        #expect(try await connects(server).first?["stream"] as? String == "public:local")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func pullIgnoresStreamAndATimelineWithoutAStreamIsPolledWithAWarning() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "stream": true"#)
        let pull = try await feedsync(["pull", "--config", config], environment: ["MASTODON_TOKEN": token])
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(try await storedIDs(scratch) == home(server))
        #expect(try await connects(server).isEmpty, "pull opens no stream")

        let bookmarks = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "stream": true"#, name: "b.json")
        try Data(try String(contentsOfFile: bookmarks, encoding: .utf8).replacingOccurrences(of: #""timeline": "home""#, with: #""timeline": "bookmarks""#).utf8)
            .write(to: URL(fileURLWithPath: bookmarks))
        let check = try await feedsync(["config", "check", "--config", bookmarks], environment: ["MASTODON_TOKEN": token])
        #expect(check.status == 0, "\(check.stderr)")
        #expect((check.stdout + check.stderr).contains("feeds[0].posts.stream: the bookmarks timeline has no stream on Mastodon; the feed is polled"),
                "\(check.stdout)\(check.stderr)")
    }

    @Test func thumpsKeepAStreamAliveAndSilenceLongerThanStreamIdleSecondsReconnects() async throws {
        let server = try startServer()   // a :thump every second
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server, postsKeys: #", "stream": true, "streamIdleSeconds": 5"#)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        try await Task.sleep(for: .seconds(8))
        #expect(try await connects(server).count == 1, "thumps kept it open past 5 s: \(daemon.log)")

        try await server.control("POST", "/_control/streaming", body: #"{"thump": 60}"#)
        #expect(try await eventually { try await connects(server).count == 2 }, "\(daemon.log)")
        #expect(daemon.log.contains("nothing arrived for 5 s (streamIdleSeconds)"), "\(daemon.log)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func feedsNamingTheSameStreamShareOneConnection() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let feeds = ["one", "two"].map { name in
            """
            {"name": "\(name)", "interval": "1h", "posts": {"integration": "mastodon", "server": "\(server.baseURL)",
             "accessTokenEnv": "MASTODON_TOKEN", "timeline": "home", "stream": true}}
            """
        }
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(#"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [\#(feeds.joined(separator: ","))]}"#.utf8)
            .write(to: config)
        let daemon = try DaemonProcess(config: config.path, in: scratch, environment: ["MASTODON_TOKEN": token])
        #expect(try await caughtUp(daemon, times: 2), "one catch-up per feed: \(daemon.log)")
        let published = try await server.control("POST", "/_control/post?count=1")
        #expect(published["streamed"] as? Int == 1, "one connection for both feeds")
        let id = try #require((published["ids"] as? [String])?.first)
        #expect(try await eventually {
            try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE id = '\(id)'") == "2"
        }, "\(daemon.log)")
        #expect(try await connects(server).count == 1)
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func SIGHUPTurnsTheStreamOnAndOff() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server, postsKeys: "")
        #expect(try await eventually { try await storedIDs(scratch) == home(server) }, "\(daemon.log)")
        #expect(try await connects(server).isEmpty, "a feed without \"stream\" is only polled")

        _ = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "stream": true"#)
        daemon.signal(SIGHUP)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        #expect(try await server.control("GET", "/_control/streams")["open"] as? Int == 1)

        _ = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "stream": false"#)
        daemon.signal(SIGHUP)
        #expect(try await eventually { try await server.control("GET", "/_control/streams")["open"] as? Int == 0 },
                "\(daemon.log)")
        #expect(try await connects(server).count == 1, "not reconnected")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func aRejectedTokenGoesThroughTheSyncsAuthenticationAndTheFeedShowsPolling() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "stream": true"#)
        let daemon = try DaemonProcess(config: config, in: scratch, environment: ["MASTODON_TOKEN": "revoked"])
        #expect(try await eventually { try await liveStatus(scratch).json?.contains("the server rejected the access token") == true },
                "\(daemon.log)")
        #expect(try await connects(server).first?["status"] as? Int == 401)
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func SIGTERMClosesAnOpenStreamAndExitsZero() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        #expect(try await server.control("GET", "/_control/streams")["open"] as? Int == 1)
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime(), "the manual's stop bound (docs/daemon.md)")
        #expect(daemon.process.terminationStatus == 0)
        #expect(try await eventually { try await server.control("GET", "/_control/streams")["open"] as? Int == 0 })
        #expect(try await sqlite(scratch.database, "PRAGMA integrity_check") == "ok")
    }
}
