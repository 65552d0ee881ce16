import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PostgresTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Sessions belong to accounts, against the real fixture servers: the feeds of one account log
/// in once and share each refresh, and a rotated refresh token is never spent twice.
@Suite(.endToEnd) struct AccountSessionEndToEndTests {
    /// Writes a config of `count` httpapi feeds of the one account at `baseURL`.
    func writeHTTPAPIConfig(_ scratch: Scratch, baseURL: String, count: Int, interval: String = "5m") throws -> String {
        let feeds = (0..<count).map { index in
            """
            {"name": "f\(index)", "interval": "\(interval)", "posts": {"integration": "httpapi", "baseURL": "\(baseURL)", "username": "demo",
             "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": 50}}
            """
        }
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": ["# + feeds.joined(separator: ", ") + "]}"
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    @Test func sixHTTPAPIFeedsOfOneAccountLogInOnceAndNeverSpendARefreshTokenTwice() async throws {
        // Tokens that last less than the engine's refresh margin: every feed after the first
        // finds the account's session spent and renews it, all at about the same time.
        let server = try ReferenceServer(posts: 120, extra: ["--token-ttl", "30"])
        let scratch = try Scratch()
        let config = try writeHTTPAPIConfig(scratch, baseURL: server.baseURL, count: 6)

        let pull = try await feedsync(["pull", "--config", config])

        #expect(pull.status == 0, "\(pull.stderr)")
        let requests = try await server.stats().byPath
        #expect(requests["POST /v1/auth/login"] == ["200": 1], "one login for the account: \(requests)")
        #expect(requests["POST /v1/auth/refresh"]?["401"] == nil, "a refresh token spent twice: \(requests)")
        for index in 0..<6 { #expect(try await postCount(scratch.database, feed: "f\(index)") == 120) }
        let tokens = try await storedTokens(scratch)
        #expect(tokens.count == 2, "one session, for the account: \(tokens.count) tokens")
    }

    @Test func aDaemonRenewsTheAccountsSessionOneAtATimeAcrossAReload() async throws {
        // Every sync finds the session spent (tokens last less than the refresh margin) and
        // renews it; a reload halfway has the old config's syncs and the new one's side by side.
        let server = try ReferenceServer(posts: 30, extra: ["--token-ttl", "30"])
        let scratch = try Scratch()
        let config = try writeHTTPAPIConfig(scratch, baseURL: server.baseURL, count: 20, interval: "1s")
        let daemon = try DaemonProcess(config: config, in: scratch)
        func synced() -> Int { daemon.log.components(separatedBy: "event=sync_done").count - 1 }

        #expect(try await eventually { synced() >= 40 }, "\(daemon.log.suffix(2000))")
        daemon.signal(SIGHUP)
        let before = synced()
        #expect(try await eventually { synced() >= before + 40 }, "\(daemon.log.suffix(2000))")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())

        #expect(daemon.log.contains("event=reloaded"), "\(daemon.log.suffix(2000))")
        #expect(!daemon.log.contains("event=sync_failed"), "\(daemon.log.suffix(2000))")
        let requests = try await server.stats().byPath
        #expect(requests["POST /v1/auth/login"] == ["200": 1], "one login for the account: \(requests)")
        #expect(requests["POST /v1/auth/refresh"]?["401"] == nil, "a refresh token spent twice: \(requests)")
    }

    @Test func twoPullsOnOnePostgreSQLStoreShareTheAccountsSessionAndNeverSpendARefreshTokenTwice() async throws {
        guard await PostgresServer.folder() != nil else { return }
        let database = try await PostgresServer.makeDatabase()
        // As above: every feed's sync finds the session spent and renews it, in two processes
        // that hold different feeds' leases at the same time.
        let server = try ReferenceServer(posts: 80, extra: ["--token-ttl", "30"])
        let scratch = try Scratch()
        let config = try scratch.writePostgresConfig(database, baseURL: server.baseURL, feeds: 6, pageSize: 20)
        // Slow answers keep each renewal on the wire while the other process wants one too.
        try await server.control("POST", "/_control/faults", body: #"{"latency_ms": 150}"#)

        async let first = feedsync(["pull", "--config", config])
        async let second = feedsync(["pull", "--config", config])
        let pulls = try await [first, second]

        for pull in pulls { #expect(pull.status == 0, "\(pull.stderr)") }
        let requests = try await server.stats().byPath
        #expect(requests["POST /v1/auth/login"] == ["200": 1], "one login for the account: \(requests)")
        #expect(requests["POST /v1/auth/refresh"]?["401"] == nil, "a refresh token spent twice: \(requests)")
        #expect(try await psql(database, "SELECT count(*) FROM feedsync_private.account_sessions") == "1")
    }

    @Test func threeBlueskyFeedsOfOnePersonLogInOnceAndShareTheRefresh() async throws {
        let password = "app-pass-SECRET-3"
        let server = try ReferenceServer(script: "Fixtures/bluesky/server.py", arguments: ["--posts", "150", "--password", password])
        let scratch = try Scratch()
        let feeds = ["home", "likes", "author:@me.test"].enumerated().map { index, timeline in
            """
            {"name": "sky\(index)", "posts": {"integration": "bluesky", "service": "\(server.baseURL)", "identifier": "me.test",
             "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "\(timeline)"}}
            """
        }
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": ["# + feeds.joined(separator: ", ") + "]}"
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: config)
        let environment = ["BLUESKY_APP_PASSWORD": password]
        func counts() async throws -> (logins: Int, refreshes: Int, requests: [String: [String: Int]]) {
            let stats = try await server.control("GET", "/_control/stats")
            return (stats["logins"] as? Int ?? -1, stats["refreshes"] as? Int ?? -1, stats["requests"] as? [String: [String: Int]] ?? [:])
        }

        let first = try await feedsync(["pull", "--config", config.path], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try await counts().logins == 1, "one createSession for three feeds of one person")

        // Every access token lapses: the three feeds share one refresh of the one session.
        try await server.control("POST", "/_control/expire-tokens")
        let second = try await feedsync(["pull", "--config", config.path], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        let after = try await counts()
        #expect((after.logins, after.refreshes) == (1, 1), "\(after.requests)")
        #expect(after.requests["POST com.atproto.server.refreshSession"] == ["200": 1], "\(after.requests)")
    }
}
