import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `feedsyncd` following the fake Jetstream (`Fixtures/bluesky/jetstream.py`, which serves the
/// fake Bluesky service's XRPC beside it), both real processes.
///
/// The feed polls once an hour: a change that reaches the store within seconds came through
/// the stream, and the server's request counts confirm no timeline was polled for it.
@Suite(.endToEnd, .serialized) struct BlueskyLiveEndToEndTests {
    static let ada = "did:plc:ada00000000000000000000"
    static let grace = "did:plc:grace0000000000000000000"
    static let owner = "did:plc:ownerowner0000000000000"

    /// `feedsyncd` with one live `home` feed on `server`, its Jetstream `server`'s own unless `jetstreamURL` names another.
    func startDaemon(_ scratch: Scratch, _ server: ReferenceServer, jetstreamURL: String? = nil) throws -> DaemonProcess {
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "sky", "interval": "1h", "posts": {"integration": "bluesky", "service": "\(server.baseURL)",
              "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home", "stream": true,
              "jetstreamURL": "\(jetstreamURL ?? "ws://127.0.0.1:\(server.port)/subscribe")"}}]}
            """
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return try DaemonProcess(config: url.path, in: scratch, environment: ["BLUESKY_APP_PASSWORD": "app-pass-word"])
    }

    func storedIDs(_ scratch: Scratch) async throws -> Set<String> {
        Set(try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = 'sky'").split(separator: "\n").map(String.init))
    }

    func timeline(_ server: ReferenceServer) async throws -> Set<String> {
        Set(try await server.control("GET", "/_control/timeline")["ids"] as? [String] ?? [])
    }

    func caughtUp(_ daemon: DaemonProcess, times: Int = 1) async throws -> Bool {
        try await eventually { daemon.log.components(separatedBy: "event=live_caught_up").count - 1 >= times }
    }

    @Test func postsRepostsAndDeletesReachTheStoreThroughJetstreamWhichGetsTheFollowsAndNoToken() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "30"])
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        #expect(try await eventually { try await storedIDs(scratch) == timeline(server) }, "\(daemon.log)")

        // The subscription: posts and reposts of the follows (every page) and the account itself, and no token.
        let subscriptions = try await server.control("GET", "/_jetstream/subscriptions")["subscriptions"] as? [[String: Any]] ?? []
        let request = try #require(subscriptions.last(where: { $0["path"] != nil }))
        let path = try #require(request["path"] as? String)
        let query = URLComponents(string: "http://x\(path)")?.queryItems ?? []
        #expect(Set(query.filter { $0.name == "wantedCollections" }.compactMap(\.value)) == ["app.bsky.feed.post", "app.bsky.feed.repost"])
        let dids = Set(query.filter { $0.name == "wantedDids" }.compactMap(\.value))
        #expect(dids.count == 9 && dids.contains(Self.ada) && dids.contains(Self.owner), "\(dids)")
        let headers = (request["headers"] as? [String: String] ?? [:]).keys.map { $0.lowercased() }
        #expect(!headers.contains("authorization") && !headers.contains("cookie"), "\(headers)")
        try await server.control("POST", "/_control/reset-stats")

        let post = try await server.control("POST", "/_jetstream/post?did=\(Self.ada)")
        let uri = try #require(post["uri"] as? String)
        #expect(try await eventually { try await storedIDs(scratch).contains(uri) }, "\(daemon.log)")
        #expect(try await sqlite(scratch.database, "SELECT author_handle FROM posts WHERE id = '\(uri)'") == "ada.bsky.social")

        let repost = try await server.control("POST", "/_jetstream/repost?uri=\(uri)&by=\(Self.grace)")
        let repostURI = try #require(repost["uri"] as? String)
        #expect(try await eventually { try await storedIDs(scratch).contains(repostURI) }, "stored as an entry of its own")
        #expect(try await storedIDs(scratch) == timeline(server), "exactly what a poll would store")

        try await server.control("POST", "/_jetstream/delete?uri=\(repostURI)")
        #expect(try await eventually { try await !storedIDs(scratch).contains(repostURI) }, "\(daemon.log)")
        try await server.control("POST", "/_jetstream/repost?uri=\(uri)&by=\(Self.grace)")
        try await server.control("POST", "/_jetstream/delete?uri=\(uri)")
        #expect(try await eventually { try await storedIDs(scratch) == timeline(server) }, "the post and its repost are gone")

        // A post by someone not followed, sent to every subscriber regardless of filters: ignored.
        let stranger = try await server.control("POST", "/_jetstream/follow?did=did:plc:stranger&on=0")
        #expect(stranger["follows"] != nil)
        let foreign = try await server.control("POST", "/_jetstream/post?did=did:plc:stranger&everyone=1")
        let marker = try await server.control("POST", "/_jetstream/post?did=\(Self.ada)")
        #expect(try await eventually { try await storedIDs(scratch).contains(marker["uri"] as? String ?? "?") })
        #expect(try await !storedIDs(scratch).contains(foreign["uri"] as? String ?? "?"))

        // An update is hydrated again and replaces the stored version.
        let markerURI = try #require(marker["uri"] as? String)
        try await server.control("POST", "/_jetstream/update?uri=\(markerURI)&text=edited%20live")
        #expect(try await eventually {
            try await sqlite(scratch.database, "SELECT text FROM posts WHERE id = '\(markerURI)'") == "edited live"
        }, "\(daemon.log)")

        // An account event is noted in the log, once.
        try await server.control("POST", "/_jetstream/account?did=\(Self.grace)&active=0")
        #expect(try await eventually { daemon.log.contains("Bluesky account \(Self.grace) is deactivated or taken down") }, "\(daemon.log)")

        let requests = try await server.control("GET", "/_control/stats")["requests"] as? [String: [String: Int]] ?? [:]
        #expect(requests["GET app.bsky.feed.getTimeline"] == nil, "no poll delivered these: \(requests)")
        #expect(requests["GET app.bsky.feed.getPosts"]?["200"] ?? 0 >= 3, "\(requests)")

        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
        let closes = try await server.control("GET", "/_jetstream/stats")["close_codes"] as? [Int] ?? []
        #expect(closes.contains(1001), "SIGTERM closes the socket with a close frame: \(closes)")
    }

    @Test func postsPublishedWhileJetstreamIsDownAreFilledInWithoutDuplicates() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "30"])
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        let first = try await server.control("POST", "/_jetstream/post?did=\(Self.grace)")
        #expect(try await eventually { try await storedIDs(scratch).contains(first["uri"] as? String ?? "?") })

        try await server.control("POST", "/_jetstream/drop?refuse=2")
        var away: [String] = []
        for did in [Self.ada, Self.grace, Self.ada] {
            away.append(try await server.control("POST", "/_jetstream/post?did=\(did)")["uri"] as? String ?? "?")
        }
        #expect(try await caughtUp(daemon, times: 2), "\(daemon.log)")
        let expected = try await timeline(server)
        #expect(try await eventually { try await storedIDs(scratch) == expected }, "\(daemon.log)")
        #expect(Set(away).isSubset(of: expected))
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE feed = 'sky'") == String(expected.count))
        // The reconnect resumed from the last event seen, rewound a few seconds.
        let paths = (try await server.control("GET", "/_jetstream/subscriptions")["subscriptions"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(paths.last?.contains("cursor=") == true, "\(paths)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func manyFollowsGoInAnOptionsUpdateAndANewFollowTakesEffectOnReconnect() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "20"])
        for n in 0..<60 { try await server.control("POST", "/_jetstream/follow?did=did:plc:extra\(n)") }
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await caughtUp(daemon), "\(daemon.log)")
        func subscriptions() async throws -> [[String: Any]] {
            try await server.control("GET", "/_jetstream/subscriptions")["subscriptions"] as? [[String: Any]] ?? []
        }
        func lastUpdate() async throws -> Set<String> {
            let update = try await subscriptions().last { $0["options_update"] != nil }?["options_update"] as? [String: Any]
            return Set(update?["wantedDids"] as? [String] ?? [])
        }
        // 8 authors, 60 more and the account: past the 50 a URL carries, so requireHello and an options_update.
        let path = try #require(try await subscriptions().last { $0["path"] != nil }?["path"] as? String)
        #expect(path.contains("requireHello=true") && !path.contains("wantedDids"), "\(path)")
        #expect(try await lastUpdate().count == 69)

        try await server.control("POST", "/_jetstream/follow?did=did:plc:newcomer&handle=newcomer.test")
        try await server.control("POST", "/_jetstream/drop")
        #expect(try await caughtUp(daemon, times: 2), "\(daemon.log)")
        #expect(try await eventually { try await lastUpdate().contains("did:plc:newcomer") }, "the follow set is read again on reconnect")
        let post = try await server.control("POST", "/_jetstream/post?did=did:plc:newcomer")
        #expect(try await eventually { try await storedIDs(scratch).contains(post["uri"] as? String ?? "?") }, "\(daemon.log)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func pullIgnoresStreamAndTheConfigRulesForJetstream() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "20"])
        let scratch = try Scratch()
        let environment = ["BLUESKY_APP_PASSWORD": "app-pass-word"]
        func config(_ timeline: String, _ extra: String) throws -> String {
            let json = """
                {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
                 "feeds": [{"name": "sky", "interval": "1h", "posts": {"integration": "bluesky", "service": "\(server.baseURL)",
                  "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "\(timeline)", "stream": true\(extra)}}]}
                """
            let url = scratch.folder.appendingPathComponent("c\(json.hashValue).json")
            try Data(json.utf8).write(to: url)
            return url.path
        }
        let pull = try await feedsync(["pull", "--config", try config("home", #", "jetstreamURL": "ws://127.0.0.1:\#(server.port)/subscribe""#)],
                                      environment: environment)
        #expect(pull.status == 0, "\(pull.stderr)")
        let subscriptions = try await server.control("GET", "/_jetstream/subscriptions")["subscriptions"] as? [Any] ?? []
        #expect(subscriptions.isEmpty, "pull opens no stream")

        let feed = try await feedsync(["config", "check", "--config", try config("feed:at://did:plc:feedmaker00000000000000/app.bsky.feed.generator/cats", "")],
                                      environment: environment)
        #expect(feed.status == 0 && (feed.stdout + feed.stderr).contains("has no stream on Jetstream (only home, author: and list: do); the feed is polled"),
                "\(feed.stdout)\(feed.stderr)")

        let plain = try await feedsync(["config", "check", "--config", try config("home", #", "jetstreamURL": "ws://jetstream.example/subscribe""#)],
                                       environment: environment)
        #expect(plain.status == 78 && plain.stderr.contains("is plain ws:// to a host that is not loopback"), "\(plain.stderr)")
        let allowed = try await feedsync(["config", "check", "--config",
                                          try config("home", #", "jetstreamURL": "ws://jetstream.example/subscribe", "jetstreamPlaintext": true"#)],
                                         environment: environment)
        #expect(allowed.status == 0, "\(allowed.stderr)")
        let https = try await feedsync(["config", "check", "--config", try config("home", #", "jetstreamURL": "https://jetstream.example/subscribe""#)],
                                       environment: environment)
        #expect(https.status == 78 && https.stderr.contains("is not a wss:// URL with a host"), "\(https.stderr)")
    }

    @Test func aRefusingJetstreamFallsBackToPollingShownInStatus() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream.py", arguments: ["--posts", "20"])
        try await server.control("POST", "/_jetstream/drop?refuse=600")
        let scratch = try Scratch()
        let daemon = try startDaemon(scratch, server)
        #expect(try await eventually { try await storedIDs(scratch) == timeline(server) }, "the feed is polled meanwhile")
        let config = scratch.folder.appendingPathComponent("feedsync.json").path
        // Five failures in a row (backoff 1, 2, 4, 8 s with jitter), then the feed shows polling and why.
        #expect(try await eventually {
            let status = try await feedsync(["status", "--config", config, "--json"], environment: ["BLUESKY_APP_PASSWORD": "app-pass-word"])
            let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            let live = (report?["feeds"] as? [[String: Any]])?.first?["live"] as? String ?? ""
            return live.hasPrefix("polling: ") && live.contains("503")
        }, "\(daemon.log)")
        #expect(daemon.log.components(separatedBy: "event=live_disconnected").count - 1 >= 5)
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }
}
