import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A config may list no feeds: the last one can be removed or logged out of, `pull` then has
/// nothing to do, `config check` warns, and `feedsyncd` keeps running and picks up feeds added later.
@Suite(.endToEnd) struct NoFeedsEndToEndTests {
    func startWebFeeds() throws -> ReferenceServer {
        try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "3", "--items", "10"])
    }

    func writeConfig(_ scratch: Scratch, feeds: String, extra: String = "") throws -> String {
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data("""
            {
              "store": {"integration": "sqlite", "path": "feedsync.sqlite"},
              "feeds": [\(feeds)]\(extra)
            }

            """.utf8).write(to: url)
        return url.path
    }

    @Test func theLastFeedIsRemovedAndPullAndConfigCheckSayThereIsNone() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let config = try writeConfig(scratch, feeds: """

                {"name": "first", "interval": "1h", "posts": {"integration": "webfeed", "url": "\(server.baseURL)/feeds/0.xml"}}
              
            """)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)

        let removed = try await feedsync(["remove", "first", "--config", config])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.hasPrefix("removed feed first from \(config)\n"), "\(removed.stdout)")
        let text = try String(contentsOfFile: config, encoding: .utf8)
        #expect(text.contains(#""feeds": []"#), "\(text)")

        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(pull.stdout == "\(config) lists no feeds, so there is nothing to pull; `feedsync add` or `feedsync login` adds one\n")
        #expect(pull.stderr.isEmpty, "\(pull.stderr)")
        let json = try await feedsync(["pull", "--config", config, "--json"])
        #expect(json.status == 0 && json.stdout == "[]\n", "\(json.stdout)\(json.stderr)")
        let one = try await feedsync(["pull", "--config", config, "--feed", "first"])
        #expect(one.status == 64 && one.stderr.hasPrefix("feedsync: --feed first: the config has no feed named \"first\" (it lists none)\n"),
                "\(one.stderr)")

        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0, "a warning, not an error: \(check.stderr)")
        #expect(check.stdout.hasPrefix("\(config): ok; 0 feeds\n"), "\(check.stdout)")
        #expect(check.stderr.split(separator: "\n").count == 1 && check.stderr.hasPrefix("feedsync: warning: \(config) lists no feeds;"),
                "\(check.stderr)")

        // The posts stay in the store, and the list takes a feed again.
        #expect(try await postCount(scratch.database, feed: "first") == 10)
        let added = try await feedsync(["add", "\(server.baseURL)/feeds/1.xml", "--name", "second", "--config", config])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try await feedsync(["pull", "--config", config]).stdout.hasPrefix("second: 10 new"))
    }

    @Test func aDaemonWithNoFeedsAnswersHealthzAndSyncsAFeedAddedLater() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let port = try MetricsEndToEndTests.freePort()
        let config = try writeConfig(scratch, feeds: "", extra: #", "metrics": {"listen": "127.0.0.1:\#(port)"}"#)
        let daemon = try DaemonProcess(config: config, in: scratch)
        defer { daemon.signal(SIGKILL) }

        var health = ""
        #expect(try await eventually {
            health = try await MetricsEndToEndTests.get("http://127.0.0.1:\(port)/healthz").stdout
            return health.hasPrefix("HTTP/1.1 200") && health.hasSuffix("\r\n\r\nok\n")
        }, "\(health)\n\(daemon.log)")
        let metrics = try await MetricsEndToEndTests.get("http://127.0.0.1:\(port)/metrics").stdout
        #expect(metrics.hasPrefix("HTTP/1.1 200") && metrics.contains("feedsync_build_info"), "\(metrics.prefix(500))")
        #expect(daemon.log.contains("event=no_feeds"), "\(daemon.log)")
        #expect(daemon.process.isRunning)

        // `feedsync add` finds the daemon through the store and tells it to reload.
        let added = try await feedsync(["add", "\(server.baseURL)/feeds/2.xml", "--name", "later", "--config", config])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("told feedsyncd (pid \(daemon.pid)) to reload the config"), "\(added.stdout)")
        #expect(try await eventually { try await postCount(scratch.database, feed: "later") == 10 }, "\(daemon.log)")
        #expect(daemon.log.contains("event=feed_added feed=later"), "\(daemon.log)")

        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime(), "\(daemon.log)")
    }

    @Test func logoutOfTheOnlyMastodonFeedRevokesTheTokenAndLeavesNoFeeds() async throws {
        let server = try ReferenceServer(script: "Fixtures/mastodon/server.py", arguments: ["--statuses", "20", "--token", "fixed-token"])
        let scratch = try Scratch()
        let login = try InteractiveProcess(["login", "mastodon", server.baseURL, "--paste", "--name", "home"], in: scratch.folder)
        let authorize = try #require(try await login.line(startingWith: "http://127.0.0.1:\(server.port)/oauth/authorize"),
                                     "\(login.stdout)\(login.stderr)")
        let page = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-s", authorize]).stdout
        let code = try #require(page.range(of: #"value="([^"]+)""#, options: .regularExpression).map { String(page[$0].dropFirst(7).dropLast()) })
        login.type(code + "\n")
        #expect(try await login.status() == 0, "\(login.stdout)\(login.stderr)")
        let config = scratch.folder.appendingPathComponent("feedsync.json").path
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        let stored = try await postCount(scratch.database, feed: "home")
        #expect(stored > 0)
        let token = try #require((try await server.control("GET", "/_control/oauth")["tokens"] as? [String])?.first)
        let tokenFile = try #require(try FileManager.default.contentsOfDirectory(atPath: scratch.folder.path).first { $0.hasSuffix(".token") })

        let logout = try await feedsync(["logout", "home", "--config", config])

        #expect(logout.status == 0, "\(logout.stderr)")
        #expect((try await server.control("GET", "/_control/oauth")["revoked"] as? [String]) == [token])
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.appendingPathComponent(tokenFile).path))
        #expect(try String(contentsOfFile: config, encoding: .utf8).contains(#""feeds": []"#))
        #expect(try await postCount(scratch.database, feed: "home") == stored, "the posts stay")
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0 && pull.stdout.contains("lists no feeds"), "\(pull.stdout)\(pull.stderr)")
    }
}
