import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `feedsync` against the fake Mastodon server (built from the API documentation), as real processes.
@Suite(.endToEnd) struct MastodonEndToEndTests {
    func startServer(statuses: Int, extra: [String] = []) throws -> ReferenceServer {
        try ReferenceServer(script: "Fixtures/mastodon/server.py", arguments: ["--statuses", String(statuses), "--token", "tok-abc"] + extra)
    }

    func writeConfig(_ scratch: Scratch, server: ReferenceServer, timeline: String = "home", extra: String = "") throws -> String {
        let json = """
            {"feeds": [{"name": "social", "posts": {"integration": "mastodon", "server": "\(server.baseURL)",
              "accessTokenEnv": "MASTODON_TOKEN", "timeline": "\(timeline)"\(extra)}}]}
            """
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    func pull(_ config: String, _ more: [String] = [], token: String = "tok-abc") async throws -> Finished {
        try await feedsync(["pull", "--config", config] + more, environment: ["MASTODON_TOKEN": token])
    }

    func timeline(_ server: ReferenceServer, _ name: String) async throws -> [String] {
        try await server.control("GET", "/_control/timeline?name=\(name)")["ids"] as? [String] ?? []
    }

    func storedIDs(_ scratch: Scratch) async throws -> [String] {
        try await sqlite(scratch.database, "SELECT id FROM posts ORDER BY CAST(id AS INTEGER) DESC").split(separator: "\n").map(String.init)
    }

    @Test func aBoundedFirstSyncThenIncrementalSyncsFetchExactlyWhatIsNew() async throws {
        let server = try startServer(statuses: 200)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server, extra: #", "maxPosts": 120"#)

        let first = try await pull(config)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("social: 120 new"), "\(first.stdout)")
        let home = try await timeline(server, "home")
        #expect(try await storedIDs(scratch) == Array(home.prefix(120)), "the newest 120, none skipped")
        let firstStats = try await server.control("GET", "/_control/stats")["requests"] as? [String: [String: Int]] ?? [:]
        #expect(firstStats["GET /api/v1/timelines/home"] == ["200": 3],
                "three pages of 40: the page after each asked for while it is read, none past the bound: \(firstStats)")

        try await server.control("POST", "/_control/post?count=50")
        try await server.control("POST", "/_control/reset-stats")
        let second = try await pull(config)
        #expect(second.stdout.hasPrefix("social: 50 new, 0 updated"), "\(second.stdout)")
        #expect(try await storedIDs(scratch) == Array(try await timeline(server, "home").prefix(170)), "no gap between old and new")
        let stats = try await server.control("GET", "/_control/stats")["requests"] as? [String: [String: Int]] ?? [:]
        #expect(stats["GET /api/v1/timelines/home"] == ["200": 2], "40 + 10 new statuses: two min_id pages, \(stats)")

        let idle = try await pull(config)
        #expect(idle.stdout.hasPrefix("social: 0 new, 0 updated, 0 deleted, 0 skipped, 0 videos resolved; 1 page, 1 request"), "\(idle.stdout)")
    }

    @Test func statusesMapWithHTMLTextRebloggersAndVideos() async throws {
        let server = try startServer(statuses: 200)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server)
        #expect(try await pull(config).status == 0)

        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE html LIKE '<p>%' AND text NOT LIKE '%<p>%'") != "0")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE repost_by IS NOT NULL AND repost_of IS NOT NULL") != "0")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE content_warning IS NOT NULL") != "0")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM videos WHERE resolved = 1 AND width > 0") != "0")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM videos WHERE resolved = 0") == "0", "videos come with their statuses")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE url IS NULL OR url NOT LIKE 'http%'") == "0",
                "every status keeps its permalink")
        let rows = try JSONSerialization.jsonObject(with: Data(try await feedsync(["posts", "--config", config, "--json", "--limit", "200"],
                                                                                  environment: ["MASTODON_TOKEN": "tok-abc"]).stdout.utf8)) as? [[String: Any]]
        #expect(rows?.count == 200)
    }

    @Test func bookmarksFollowTheServersLinksAcrossPages() async throws {
        let server = try startServer(statuses: 120)
        let home = try await timeline(server, "home")
        for id in home.prefix(55) { try await server.control("POST", "/_control/bookmark?id=\(id)") }
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server, timeline: "bookmarks", extra: #", "pageSize": 20"#)

        let result = try await pull(config)

        #expect(result.status == 0, "\(result.stderr)")
        let bookmarks = try await timeline(server, "bookmarks")
        #expect(bookmarks.count > 40, "more than two pages of 20")
        #expect(try await storedIDs(scratch).sorted() == bookmarks.sorted())
    }

    @Test func anAccountTimelineByAcctAndAHashtagTimelineSync() async throws {
        let server = try startServer(statuses: 150)
        let (data, _) = try await URLSession.shared.data(from: URL(string: server.baseURL + "/_control/accounts")!)
        let accounts = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
        let acct = try #require(accounts.first?["acct"] as? String)
        let accountID = try #require(accounts.first?["id"] as? String)
        for (timelineName, control) in [("account:@\(acct)", "account:\(accountID)"), ("hashtag:swift", "tag:swift")] {
            let scratch = try Scratch()
            let config = try writeConfig(scratch, server: server, timeline: timelineName)
            let result = try await pull(config)
            #expect(result.status == 0, "\(timelineName): \(result.stderr)")
            #expect(Set(try await storedIDs(scratch)) == Set(try await timeline(server, control)), "\(timelineName)")
        }
    }

    @Test func theRateLimitIsPacedRatherThanHit() async throws {
        let server = try startServer(statuses: 200, extra: ["--rate-limit", "5", "--rate-window", "2"])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server)
        let started = Date()

        let result = try await pull(config)

        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await postCount(scratch.database, feed: "social") == 200)
        let stats = try await server.control("GET", "/_control/stats")["requests"] as? [String: [String: Int]] ?? [:]
        #expect(!stats.values.contains { $0["429"] != nil }, "no request drew a 429: \(stats)")
        #expect(Date().timeIntervalSince(started) > 1.5, "six requests at five per two seconds had to wait for a reset")
    }

    @Test func sinceBoundsTheFirstSyncByDate() async throws {
        let server = try startServer(statuses: 120)
        let home = try await timeline(server, "home")
        let thirtieth = try await server.control("GET", "/_control/status?id=\(home[29])")
        let since = try #require(thirtieth["created_at"] as? String)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server, extra: #", "pageSize": 20, "since": "\#(since)""#)

        let result = try await pull(config)

        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await storedIDs(scratch) == Array(home.prefix(30)), "statuses from \(since) on, and no older")
    }

    @Test func aRejectedTokenExits77WithoutEchoingIt() async throws {
        let server = try startServer(statuses: 10)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server)

        let result = try await pull(config, token: "wrong-token-123")

        #expect(result.status == 77)
        #expect(result.stderr.contains("rejected the access token") && !result.stderr.contains("wrong-token-123"), "\(result.stderr)")
    }

    @Test func aFullSyncRefreshesEditsButNeverDeletes() async throws {
        let server = try startServer(statuses: 100)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server, extra: #", "maxPosts": 60"#)
        #expect(try await pull(config).status == 0)
        let home = try await timeline(server, "home")
        try await server.control("POST", "/_control/edit?id=\(home[3])")
        try await server.control("POST", "/_control/delete?id=\(home[5])")

        let full = try await pull(config, ["--full"])

        #expect(full.status == 0, "\(full.stderr)")
        // The deleted status stays cached; the bound of 60 now reaches one older status.
        #expect(full.stdout.hasPrefix("social: 1 new, 1 updated, 0 deleted"), "\(full.stdout)")
        #expect(try await postCount(scratch.database, feed: "social") == 61)
    }
}
