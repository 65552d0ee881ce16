import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Swapping a feed's backend by editing config, and the store's edges: tokens kept out of the
/// mirror, local commands without secrets, one daemon per store, reloads, migration races.
@Suite(.endToEnd) struct BackendSwapTests {
    /// A config whose feed `demo` replays the recorded demo feed, or reads `baseURL`.
    func writeDemoConfig(_ scratch: Scratch, baseURL: String? = nil) throws -> String {
        let source = baseURL.map { #""baseURL": "\#($0)""# }
            ?? #""fixture": "\#(repository.appendingPathComponent("Fixtures/demo-feed").path)""#
        let json = """
            {"feeds": [{"name": "demo", "posts": {"integration": "httpapi", \(source), "username": "demo",
                        "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": 50}}]}
            """
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    @Test func aDemoToLiveSwapLeavesExactlyTheServersPostsAndTheReverseSwapIsGuarded() async throws {
        let server = try ReferenceServer(posts: 3_000)
        let scratch = try Scratch()
        var config = try writeDemoConfig(scratch)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        #expect(try await feedsync(["read", "demo/p0000007", "--config", config], environment: [:]).status == 0)

        config = try writeDemoConfig(scratch, baseURL: server.baseURL)
        let live = try await feedsync(["pull", "--config", config])

        #expect(live.status == 0, "\(live.stderr)")
        #expect(live.stderr.contains("feed demo now syncs from httpapi \(server.baseURL)"), "says so in one line: \(live.stderr)")
        #expect(try await storedPosts(scratch.database) == server.snapshot(), "the mirror is the server's, texts included")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM post_state WHERE post_id = 'p0000007' AND read_at IS NOT NULL") == "1",
                "read marks stay on surviving posts")
        #expect(try await feedsync(["pull", "--config", config]).stdout.hasPrefix("demo: 0 new, 0 updated, 0 deleted"))

        // Back to the recording: most of the mirror would go, which the guard stops.
        config = try writeDemoConfig(scratch)
        let back = try await feedsync(["pull", "--config", config])
        #expect(back.status == 65 && back.stderr.contains("--force-delete"), "\(back.stderr)")
        // The recording's own deletions apply as it is walked; the sweep deletes nothing.
        #expect(try await postCount(scratch.database, feed: "demo") >= 2_990, "nothing swept")
        let forced = try await feedsync(["pull", "--config", config, "--full", "--force-delete"])
        #expect(forced.status == 0, "\(forced.stderr)")

        let fresh = try Scratch()
        #expect(try await feedsync(["pull", "--config", try writeDemoConfig(fresh)]).status == 0)
        #expect(try await storedPosts(scratch.database) == storedPosts(fresh.database), "equal to a fresh sync of the recording")
    }

    @Test func anHTTPAPIFeedSwappedToMastodonMirrorsOnlyMastodonAndNoTokenIsInTheDatabase() async throws {
        let reference = try ReferenceServer(posts: 60)
        let mastodon = try ReferenceServer(script: "Fixtures/mastodon/server.py", arguments: ["--statuses", "45", "--token", "tok-mastodon-SECRET"])
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: reference.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        let httpTokens = try await storedTokens(scratch)

        let swapped = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "home", "posts": {"integration": "mastodon", "server": "\(mastodon.baseURL)",
                        "accessTokenEnv": "MASTODON_TOKEN", "timeline": "home"}}]}
            """
        try Data(swapped.utf8).write(to: URL(fileURLWithPath: config))
        let environment = ["MASTODON_TOKEN": "tok-mastodon-SECRET"]
        let guarded = try await feedsync(["pull", "--config", config], environment: environment)
        #expect(guarded.status == 65 && guarded.stderr.contains("--force-delete"), "\(guarded.stderr)")
        let forced = try await feedsync(["pull", "--config", config, "--full", "--force-delete"], environment: environment)
        #expect(forced.status == 0, "\(forced.stderr)")

        let ids = try await mastodon.control("GET", "/_control/timeline?name=home")["ids"] as? [String] ?? []
        #expect(try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = 'home' ORDER BY id").split(separator: "\n").map(String.init)
                == ids.sorted(), "only the Mastodon statuses")
        #expect(try await feedsync(["pull", "--config", config], environment: environment).stdout.hasPrefix("home: 0 new, 0 updated, 0 deleted"))

        let published = databaseBytes(scratch)
        for token in httpTokens + ["tok-mastodon-SECRET"] {
            #expect(published.range(of: Data(token.utf8)) == nil, "a token is in the .sqlite file or its WAL")
        }
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'sessions'") == "0")
    }

    @Test func localCommandsNeedNoSecretAndNoNetwork() async throws {
        let server = try ReferenceServer(posts: 30)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        server.process.terminate()

        let noSecret = ["FEEDSYNC_PASSWORD": ""]
        let posts = try await feedsync(["posts", "--config", config, "--limit", "2"], environment: noSecret)
        #expect(posts.status == 0 && posts.stdout.hasPrefix("home/p0000030"), "\(posts.stderr)")
        #expect(try await feedsync(["status", "--config", config], environment: noSecret).status == 0)
        let read = try await feedsync(["read", "home/p0000030", "--config", config], environment: noSecret)
        #expect(read.status == 0 && read.stdout == "home/p0000030 marked read\n", "\(read.stderr)")
        #expect(try await feedsync(["unread", "p0000030", "--feed", "home", "--config", config], environment: noSecret).status == 0)

        let check = try await feedsync(["config", "check", "--config", config], environment: noSecret)
        #expect(check.status == 0 && check.stderr.contains("FEEDSYNC_PASSWORD is not set or empty"), "\(check.stderr)")
        let pull = try await feedsync(["pull", "--config", config], environment: noSecret)
        #expect(pull.status == 78, "only pull needs the secret: \(pull.stderr)")

        let unknown = try await feedsync(["posts", "--feed", "nope", "--config", config], environment: noSecret)
        let pullUnknown = try await feedsync(["pull", "--feed", "nope", "--config", config])
        #expect(unknown.status == 64 && pullUnknown.status == 64)
        #expect(unknown.stderr.split(separator: "\n").first == pullUnknown.stderr.split(separator: "\n").first, "\(unknown.stderr)")
    }
}

@Suite(.endToEnd) struct StoreLifecycleTests {
    @Test func aSecondDaemonOnTheStoreIsRefusedNamingTheFirst() async throws {
        let server = try ReferenceServer(posts: 20)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1h")
        let first = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { try await postCount(scratch.database) == 20 })

        let second = try DaemonProcess(config: config, in: scratch)
        #expect(await second.exits(), "refused: it ends on its own")
        #expect(second.process.terminationStatus == 75, "\(second.log)")
        #expect(second.log.contains("another feedsyncd (pid \(first.pid)"), "\(second.log)")

        let status = try await feedsync(["status", "--config", config, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let daemon = report?["daemon"] as? [String: Any]
        #expect(daemon?["pid"] as? Int == Int(first.pid) && daemon?["running"] as? Bool == true, "\(status.stdout)")
        first.signal(SIGTERM)
        #expect(await first.stopsInTime())
    }

    @Test func aReloadDuringALongSyncIsFollowedBySuccessfulSyncs() async throws {
        let server = try ReferenceServer(posts: 20_000)
        try await server.control("POST", "/_control/faults", body: #"{"latency_ms": 5}"#)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, pageSize: 200, interval: "1s")
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { try await postCount(scratch.database) >= 1_000 })

        daemon.signal(SIGHUP)
        #expect(try await eventually { daemon.log.contains("event=reloaded") }, "\(daemon.log)")
        try await server.control("POST", "/_control/faults", body: "{}")
        #expect(try await eventually { daemon.log.components(separatedBy: "event=sync_done").count >= 3 }, "\(daemon.log)")

        #expect(!daemon.log.contains("event=sync_failed"), "the daemon contended with itself: \(daemon.log)")
        #expect(try await storedPosts(scratch.database) == server.snapshot())
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func aReloadChangesAddsAndRemovesFeeds() async throws {
        let first = try ReferenceServer(posts: 30), second = try ReferenceServer(posts: 25, seed: 9), third = try ReferenceServer(posts: 30, seed: 4)
        let scratch = try Scratch()
        func feed(_ name: String, _ server: ReferenceServer, interval: String = "1s") -> String {
            """
            {"name": "\(name)", "interval": "\(interval)",
             "posts": {"integration": "httpapi", "baseURL": "\(server.baseURL)", "username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD"}}
            """
        }
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(#"{"feeds": [\#(feed("a", first)), \#(feed("b", second))]}"#.utf8).write(to: config)
        let daemon = try DaemonProcess(config: config.path, in: scratch)
        #expect(try await eventually { try await postCount(scratch.database, feed: "b") == 25 })

        // b is removed, c is added, a moves to another server with the same ids and other texts
        // (a backend swap under the daemon).
        try Data(#"{"feeds": [\#(feed("a", third, interval: "2s")), \#(feed("c", second))]}"#.utf8).write(to: config)
        daemon.signal(SIGHUP)

        #expect(try await eventually { try await postCount(scratch.database, feed: "c") == 25 }, "\(daemon.log)")
        let moved = try await third.snapshot()
        #expect(try await eventually {
            try await sqlite(scratch.database, "SELECT id || '|' || text || '|' FROM posts WHERE feed = 'a' ORDER BY id").split(separator: "\n").map(String.init) == moved
        }, "\(daemon.log)")
        #expect(daemon.log.contains("event=feed_removed feed=b") && daemon.log.contains("event=feed_added feed=c"))
        #expect(!daemon.log.contains("event=sync_failed"), "\(daemon.log)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func processesOpeningAFreshStoreAtOnceAllSucceed() async throws {
        let server = try ReferenceServer(posts: 5)
        let lone = try Scratch()
        #expect(try await feedsync(["pull", "--config", try lone.writeConfig(baseURL: server.baseURL)]).status == 0)
        let migrations = try await sqlite(lone.database, "SELECT COUNT(*) FROM schema_migrations")
        for round in 0..<20 {
            let scratch = try Scratch()
            let config = try scratch.writeConfig(baseURL: server.baseURL)
            let results = try await withThrowingTaskGroup(of: Finished.self) { group in
                for command in Array(repeating: ["pull", "--wait", "120"], count: 3) {
                    group.addTask { try await feedsync(command + ["--config", config]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for result in results {
                #expect(result.status == 0, "round \(round): \(result.stderr)")
                #expect(!result.stderr.contains("already exists") && !result.stderr.contains("duplicate column"), "\(result.stderr)")
            }
            #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM schema_migrations") == migrations)
        }
    }
}
