import Foundation
import Testing

/// A private feed's credentials go with the archive's fetches to the feed's own origin only
/// (issue 37: "it sends no token to a host that is not the feed's own server"). The media fixture
/// serves `/private/feed.xml` and `/m/private-<n>.png` behind one Basic login, and records the
/// `Host` and path of every request that carried an `Authorization`; `localhost` on the same port
/// is another origin than `127.0.0.1` (another host name).
@Suite struct MediaCredentialEndToEndTests {
    @Test func aPrivateFeedsLoginGoesToItsOwnOriginOnlyAndNotAfterARedirectAway() async throws {
        let server = try ReferenceServer(script: "Fixtures/media/server.py", arguments: [])
        let scratch = try Scratch()
        let home = "127.0.0.1:\(server.port)", other = "localhost:\(server.port)"
        try await server.control("POST", "/_control/feed", body: """
            [{"id": "1", "media": [{"url": "/m/private-1.png", "type": "image/png"}]},
             {"id": "2", "media": [{"url": "http://\(other)/m/img-2.png", "type": "image/png"}]},
             {"id": "3", "media": [{"url": "/m/tohost-3.png", "type": "image/png"}]}]
            """)
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data("""
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "f", "posts": {"integration": "webfeed", "url": "http://\(home)/private/feed.xml",
                        "auth": {"basic": {"user": "reader", "passwordEnv": "PRIVATE_FEED_PASSWORD"}}}}],
             "media": {"path": "media"}}
            """.utf8).write(to: config)
        let environment = ["PRIVATE_FEED_PASSWORD": "s3cret"]
        let pull = try await feedsync(["pull", "--config", config.path], environment: environment)
        #expect(pull.status == 0, "\(pull.stderr)")
        let fetch = try await feedsync(["media", "fetch", "--config", config.path], environment: environment)
        #expect(fetch.status == 0 && fetch.stdout.contains("fetched 3 "), "\(fetch.stdout) \(fetch.stderr)")
        let rows = try await sqlite(scratch.database, "SELECT url || '|' || status || '|' || COALESCE(bytes, '') FROM media ORDER BY url")
        #expect(rows == """
            http://\(home)/m/private-1.png|fetched|2048
            http://\(home)/m/tohost-3.png|fetched|2048
            http://\(other)/m/img-2.png|fetched|2048
            """, "\(rows)")
        let stats = try await server.control("GET", "/_control/stats")
        let authorized = stats["authorizedHosts"] as? [String] ?? []
        let basic = "Basic " + Data("reader:s3cret".utf8).base64EncodedString()
        #expect(Set(stats["authorization"] as? [String] ?? []) == [basic], "\(stats)")
        // The feed (pulled once), the private image, and the redirect's first leg; nothing to localhost.
        #expect(authorized.sorted() == ["\(home) /m/private-1.png", "\(home) /m/tohost-3.png", "\(home) /private/feed.xml"], "\(authorized)")
        let requests = stats["requests"] as? [String: Int] ?? [:]
        #expect(requests["/m/img-2.png"] == 1 && requests["/m/img-3.png"] == 1, "both other-origin files were asked for: \(requests)")
        #expect(!fetch.stderr.contains("s3cret") && !fetch.stderr.contains(basic), "no secret printed")
    }

    @Test func withoutTheFeedsSecretTheMediaIsFetchedWithoutItAndOneLineSaysWhy() async throws {
        let server = try ReferenceServer(script: "Fixtures/media/server.py", arguments: [])
        let scratch = try Scratch()
        try await server.control("POST", "/_control/feed", body: #"[{"id": "1", "media": [{"url": "/m/img-1.png", "type": "image/png"}]}]"#)
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data("""
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "f", "posts": {"integration": "webfeed", "url": "\(server.baseURL)/feed.xml",
                        "auth": {"bearerEnv": "FEED_TOKEN"}}}],
             "media": {"path": "media"}}
            """.utf8).write(to: config)
        #expect(try await feedsync(["pull", "--config", config.path], environment: ["FEED_TOKEN": "t0ken"]).status == 0)
        let fetch = try await feedsync(["media", "fetch", "--config", config.path], environment: [:])
        #expect(fetch.status == 0 && fetch.stdout.contains("fetched 1 "), "\(fetch.stdout) \(fetch.stderr)")
        let lines = fetch.stderr.split(separator: "\n").filter { $0.contains("media fetched without the feed's credentials") }
        #expect(lines.count == 1 && lines[0].contains("FEED_TOKEN"), "\(fetch.stderr)")
        #expect(try await sqlite(scratch.database, "SELECT status FROM media") == "fetched")
    }
}
