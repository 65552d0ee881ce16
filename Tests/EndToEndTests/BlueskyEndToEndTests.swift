import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `feedsync` against the fake Bluesky service (written from the lexicons and docs.bsky.app),
/// as real processes.
@Suite(.endToEnd) struct BlueskyEndToEndTests {
    static let password = "app-pass-SECRET-1"

    func startServer(posts: Int, extra: [String] = []) throws -> ReferenceServer {
        try ReferenceServer(script: "Fixtures/bluesky/server.py", arguments: ["--posts", String(posts), "--password", Self.password] + extra)
    }

    func writeConfig(_ scratch: Scratch, server: ReferenceServer, timeline: String = "home", extra: String = "") throws -> String {
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "sky", "interval": "10m", "posts": {"integration": "bluesky", "service": "\(server.baseURL)",
              "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "\(timeline)"\(extra)}}]}
            """
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    func pull(_ config: String, _ more: [String] = [], password: String = Self.password) async throws -> Finished {
        try await feedsync(["pull", "--config", config] + more, environment: ["BLUESKY_APP_PASSWORD": password])
    }

    func timeline(_ server: ReferenceServer, _ query: String = "") async throws -> [String] {
        try await server.control("GET", "/_control/timeline?\(query)")["ids"] as? [String] ?? []
    }

    func storedIDs(_ scratch: Scratch) async throws -> Set<String> {
        Set(try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = 'sky'").split(separator: "\n").map(String.init))
    }

    func stats(_ server: ReferenceServer) async throws -> (requests: [String: [String: Int]], logins: Int, refreshes: Int) {
        let stats = try await server.control("GET", "/_control/stats")
        return (stats["requests"] as? [String: [String: Int]] ?? [:], stats["logins"] as? Int ?? -1, stats["refreshes"] as? Int ?? -1)
    }

    @Test func aBoundedFirstSyncThenIncrementalSyncsFetchWhatIsNewWithoutAGap() async throws {
        let server = try startServer(posts: 300)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server, extra: #", "maxPosts": 250"#)

        let first = try await pull(config)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("sky: 250 new, 0 updated, 0 deleted, 0 skipped"), "\(first.stdout)")
        #expect(try await storedIDs(scratch) == Set(try await timeline(server).prefix(250)), "the newest 250")
        #expect(try await stats(server).requests["GET app.bsky.feed.getTimeline"] == ["200": 3],
                "100, 100 and 50: the page after each asked for while it is mapped, none past the bound")

        // More than a page arrives: the walk goes on until a page holds only what is stored.
        try await server.control("POST", "/_control/post?count=150")
        try await server.control("POST", "/_control/reset-stats")
        let second = try await pull(config)
        #expect(second.stdout.hasPrefix("sky: 150 new, 0 updated, 0 deleted, 0 skipped"), "\(second.stdout)")
        #expect(try await storedIDs(scratch) == Set(try await timeline(server).prefix(400)), "no gap between old and new")
        let requests = try await stats(server).requests
        #expect(requests["GET app.bsky.feed.getTimeline"] == ["200": 3], "100 new, 50 new + 50 stored, then one page of overlap: \(requests)")

        let idle = try await pull(config)
        #expect(idle.stdout.hasPrefix("sky: 0 new, 0 updated, 0 deleted, 0 skipped, 0 videos resolved; 1 page, 1 request"), "\(idle.stdout)")
    }

    @Test func aRepostOfAnOldPostArrivesOnTopBesideTheOriginal() async throws {
        let server = try startServer(posts: 200)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server, extra: #", "maxPosts": 120"#)
        #expect(try await pull(config).status == 0)
        let ids = try await timeline(server)
        let stored = try #require(ids.prefix(120).last { $0.contains("/app.bsky.feed.post/") })
        let unstored = try #require(ids.dropFirst(150).first { $0.contains("/app.bsky.feed.post/") })
        let bob = "did:plc:grace0000000000000000000"
        let likes = try await sqlite(scratch.database, "SELECT like_count || '|' || text FROM posts WHERE id = '\(stored)'")
        for uri in [stored, unstored] { try await server.control("POST", "/_control/repost?uri=\(uri)&by=\(bob)") }

        let result = try await pull(config)

        #expect(result.stdout.hasPrefix("sky: 2 new, 0 updated"), "two reposts, however old their posts: \(result.stdout)")
        let reposts = try await sqlite(scratch.database, """
            SELECT repost_of || '|' || repost_by || '|' || (repost_at IS NOT NULL) FROM posts WHERE repost_of IN ('\(stored)', '\(unstored)') ORDER BY repost_at
            """)
        #expect(reposts.split(separator: "\n").map(String.init) == ["\(stored)|\(bob)|1", "\(unstored)|\(bob)|1"])
        #expect(try await sqlite(scratch.database, "SELECT like_count || '|' || text || '|' || (repost_by IS NULL) FROM posts WHERE id = '\(stored)'") == likes + "|1",
                "the original keeps its own row, untouched by the repost")
    }

    @Test func thirtySyncsWithShortLivedTokensLogInOnceAndRefreshTheRest() async throws {
        // An access token of 30 s is always inside the engine's 60 s margin: every sync refreshes.
        let server = try startServer(posts: 20, extra: ["--access-ttl", "30"])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server)
        for run in 1...30 {
            let result = try await pull(config)
            #expect(result.status == 0, "run \(run): \(result.stderr)")
        }
        let (_, logins, refreshes) = try await stats(server)
        #expect(logins == 1, "createSession once, ever")
        #expect(refreshes == 29)
    }

    @Test func anExpiredTokenIsRefreshedAnExpiredSessionLogsInAgainAndARefusedLoginExits77() async throws {
        let server = try startServer(posts: 30)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server)
        #expect(try await pull(config).status == 0)

        try await server.control("POST", "/_control/expire-tokens")
        let refreshed = try await pull(config)
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        var counts = try await stats(server)
        #expect((counts.logins, counts.refreshes) == (1, 1), "400 ExpiredToken: one refresh, no new login")
        #expect(counts.requests["GET app.bsky.feed.getTimeline"]?["400"] == 1)

        try await server.control("POST", "/_control/expire-tokens?refresh=1")
        let relogged = try await pull(config)
        #expect(relogged.status == 0, "\(relogged.stderr)")
        counts = try await stats(server)
        #expect((counts.logins, counts.refreshes) == (2, 2), "the refresh is refused too: then one login")

        try await server.control("POST", "/_control/expire-tokens?refresh=1")
        let refused = try await pull(config, password: "wrong-pass-SECRET-2")
        #expect(refused.status == 77, "\(refused.stderr)")
        #expect(refused.stderr.contains("app password"), "\(refused.stderr)")
        counts = try await stats(server)
        #expect(counts.logins == 3, "one refresh, one login, then the error")
        for secret in [Self.password, "wrong-pass-SECRET-2", "eyJ"] {
            #expect(!refused.stderr.contains(secret) && !refused.stdout.contains(secret))
        }
        let published = databaseBytes(scratch)
        #expect(published.range(of: Data("eyJ0eXAiOiJKV1Qi".utf8)) == nil, "no token in the database")
    }

    @Test func theQuotaIsPacedAndASpentQuotaWaitsForItsReset() async throws {
        let server = try startServer(posts: 700, extra: ["--rate-limit", "4", "--rate-window", "2"])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server)
        let started = Date()
        let paced = try await pull(config)
        #expect(paced.status == 0, "\(paced.stderr)")
        #expect(try await postCount(scratch.database, feed: "sky") == 700)
        #expect(Date().timeIntervalSince(started) > 1.5, "seven pages at four per two seconds wait for a reset")
        #expect(!(try await stats(server).requests.values.contains { $0["429"] != nil }), "paced, never refused")

        // Someone else spends the quota: the first request draws a 429 and waits for the reset.
        // A window long enough that a pull started on a loaded machine still meets the spent quota.
        try await server.control("POST", "/_control/rate-limit", body: #"{"limit": 2, "window": 8}"#)
        try await server.control("POST", "/_control/post?count=5")
        for _ in 0..<2 { _ = try? await URLSession.shared.data(from: URL(string: server.baseURL + "/xrpc/app.bsky.feed.getTimeline")!) }
        let waited = try await pull(config)
        #expect(waited.status == 0, "\(waited.stderr)")
        #expect(waited.stdout.hasPrefix("sky: 5 new"), "\(waited.stdout)")
        #expect(try await stats(server).requests["GET app.bsky.feed.getTimeline"]?["429"] == 1)
    }

    @Test func badItemsAreSkippedWithTheirReasonAndTheRestStands() async throws {
        let server = try startServer(posts: 50)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server)
        #expect(try await pull(config).status == 0)
        for kind in ["count", "ratio", "time"] { try await server.control("POST", "/_control/bad?kind=\(kind)") }
        try await server.control("POST", "/_control/post?count=3&reposts=0")

        let result = try await pull(config)

        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("sky: 3 new, 0 updated, 0 deleted, 3 skipped"), "\(result.stdout)")
        for reason in ["likeCount -5 is out of range", "post.embed.images[].aspectRatio.width is not of the expected type",
                       "record.createdAt \"2026-02-30T00:00:00Z\" is not an RFC 3339 time"] {
            #expect(result.stderr.contains(reason), "\(reason): \(result.stderr)")
        }
        #expect(try await pull(config).stdout.hasPrefix("sky: 0 new, 0 updated, 0 deleted, 0 skipped"), "reported once")
    }

    @Test func aFullWalkUpdatesCountsAndHandlesRewritesNothingElseAndNeverDeletes() async throws {
        let server = try startServer(posts: 120)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server)
        #expect(try await pull(config).status == 0)
        let before = try await sqlite(scratch.database, "SELECT id, author_id, text, created_at, edited_at, reply_to, reply_count, repost_count, like_count, quote_count, video_ids, html, language, repost_by, repost_of, attachments, url, quote_of, labels, repost_at FROM posts ORDER BY id")
        let posts = try await timeline(server).filter { $0.contains("/app.bsky.feed.post/") }
        try await server.control("POST", "/_control/likes?uri=\(posts[3])&count=99999")
        try await server.control("POST", "/_control/delete?uri=\(posts[5])")
        try await server.control("POST", "/_control/handle?did=did:plc:ada00000000000000000000&handle=ada-renamed.example.com")
        #expect(try await pull(config).stdout.hasPrefix("sky: 0 new, 0 updated, 0 deleted"), "an incremental sync sees no change")

        let full = try await pull(config, ["--full"])

        #expect(full.status == 0, "\(full.stderr)")
        #expect(full.stdout.hasPrefix("sky: 0 new, 1 updated, 0 deleted"), "\(full.stdout)")
        #expect(try await sqlite(scratch.database, "SELECT like_count FROM posts WHERE id = '\(posts[3])'") == "99999")
        #expect(try await postCount(scratch.database, feed: "sky") == 120, "the deleted post stays cached")
        #expect(try await sqlite(scratch.database, "SELECT handle FROM users WHERE id = 'did:plc:ada00000000000000000000'") == "ada-renamed.example.com")
        // The posts' own columns: author_handle follows the author's renamed profile by design.
        let after = try await sqlite(scratch.database, "SELECT id, author_id, text, created_at, edited_at, reply_to, reply_count, repost_count, like_count, quote_count, video_ids, html, language, repost_by, repost_of, attachments, url, quote_of, labels, repost_at FROM posts ORDER BY id")
        let changed = zip(before.split(separator: "\n"), after.split(separator: "\n")).filter { $0 != $1 }
        #expect(changed.count == 1 && changed.first?.1.contains("99999") == true, "one row rewritten: \(changed)")
    }

    @Test func everyTimelineKindMirrorsWhatTheServerLists() async throws {
        let server = try startServer(posts: 400)
        let feed = "at://did:plc:feedmaker00000000000000/app.bsky.feed.generator/cats"
        let list = "at://did:plc:ownerowner0000000000000/app.bsky.graph.list/3kfriends0001"
        for (timeline, extra, control) in [
            ("author:@grace.bsky.social", #", "filter": "posts_no_replies""#, "name=getAuthorFeed&actor=grace.bsky.social&filter=posts_no_replies"),
            ("author:did:plc:ada00000000000000000000", "", "name=getAuthorFeed&actor=did:plc:ada00000000000000000000"),
            ("feed:\(feed)", "", "name=getFeed&feed=\(feed)"), ("list:\(list)", "", "name=getListFeed&list=\(list)"),
            ("likes", "", "name=getActorLikes&actor=did:plc:ownerowner0000000000000"), ("search:coffee", "", "name=searchPosts&q=coffee"),
        ] {
            let scratch = try Scratch()
            let config = try writeConfig(scratch, server: server, timeline: timeline, extra: extra + #", "pageSize": 25"#)
            let result = try await pull(config)
            #expect(result.status == 0, "\(timeline): \(result.stderr)")
            let expected = Set(try await self.timeline(server, control))
            #expect(expected.count > 25, "\(timeline): more than a page")
            #expect(try await storedIDs(scratch) == expected, "\(timeline)")
        }
    }

    @Test func postsKeepTheirFacetsMediaQuotesAndPermalinks() async throws {
        let server = try startServer(posts: 300)
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server: server)
        #expect(try await pull(config).status == 0)
        for (what, sql) in [
            ("links", "SELECT COUNT(*) FROM posts WHERE html LIKE '%<a href=\"https://%'"),
            ("quotes", "SELECT COUNT(*) FROM posts WHERE quote_of LIKE 'at://%/app.bsky.feed.post/%'"),
            ("replies", "SELECT COUNT(*) FROM posts WHERE reply_to LIKE 'at://%'"),
            ("images", "SELECT COUNT(*) FROM posts WHERE attachments LIKE '%image%'"),
            ("videos", "SELECT COUNT(*) FROM videos WHERE resolved = 1 AND stream_url LIKE 'https://%playlist.m3u8'"),
            ("permalinks", "SELECT COUNT(*) FROM posts WHERE url LIKE 'https://bsky.app/profile/did:%/post/%'"),
        ] {
            #expect(try await sqlite(scratch.database, sql) != "0", "\(what)")
        }
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM videos WHERE resolved = 0") == "0", "videos come with their posts")
    }

    @Test func aMastodonFeedSwappedToBlueskyMirrorsOnlyBluesky() async throws {
        let mastodon = try ReferenceServer(script: "Fixtures/mastodon/server.py", arguments: ["--statuses", "40", "--token", "tok-m"])
        let bluesky = try startServer(posts: 60)
        let scratch = try Scratch()
        let config = try scratch.writeMastodonConfig(server: mastodon.baseURL)
        #expect(try await feedsync(["pull", "--config", config], environment: ["MASTODON_TOKEN": "tok-m"]).status == 0)

        let swapped = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "social", "interval": "1h", "posts": {"integration": "bluesky", "service": "\(bluesky.baseURL)",
                        "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home"}}]}
            """
        try Data(swapped.utf8).write(to: URL(fileURLWithPath: config))
        let forced = try await pull(config, ["--full", "--force-delete"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let stored = try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = 'social'").split(separator: "\n").map(String.init)
        #expect(Set(stored) == Set(try await timeline(bluesky)), "only the Bluesky posts")
        #expect(try await pull(config).stdout.hasPrefix("social: 0 new, 0 updated, 0 deleted"))
    }
}
