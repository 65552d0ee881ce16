import Foundation
import Testing

/// `feedsync` as a real process against the reference server as a real process, on loopback.
@Suite(.endToEnd, .serialized) struct PullEndToEndTests {
    @Test func aPullMirrorsTheServerExactlyAndFollowsAppendsEditsAndDeletes() async throws {
        let server = try ReferenceServer(posts: 3000, seed: 3)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, pageSize: 200)

        let first = try await feedsync(["pull", "--config", config])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("home: 3000 new, 0 updated, 0 deleted, 0 skipped"), "\(first.stdout)")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts") == "3000")
        #expect(try await storedPosts(scratch.database) == server.snapshot())

        try await server.control("POST", "/_control/append?count=10")
        for id in ["p0000005", "p0000100", "p0001000", "p0002999", "p0003005"] { try await server.control("POST", "/_control/edit?id=\(id)") }
        for id in ["p0000001", "p0000500", "p0003001"] { try await server.control("POST", "/_control/delete?id=\(id)") }

        let second = try await feedsync(["pull", "--config", config])
        #expect(second.status == 0, "\(second.stderr)")
        // p0003001 and p0003005 were appended and then deleted or edited before this pull saw them:
        // one new post fewer and one deletion fewer than the control calls, and the edit counts as new.
        #expect(second.stdout.hasPrefix("home: 9 new, 4 updated, 2 deleted"), "\(second.stdout)")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts") == "3007")
        #expect(try await storedPosts(scratch.database) == server.snapshot())
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE text LIKE '%[edit 1]'") == "5")
    }

    @Test func aPullWithNothingNewCostsOneRequestAndChangesNoRow() async throws {
        let server = try ReferenceServer(posts: 500)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        let dataTables = "SELECT * FROM posts; SELECT * FROM users; SELECT * FROM videos; SELECT name, cursor, cursor_validator FROM feeds;"
        let before = try await sqlite(scratch.database, dataTables)
        try await server.control("POST", "/_control/reset-stats")

        let idle = try await feedsync(["pull", "--config", config])

        #expect(idle.status == 0)
        #expect(idle.stdout.hasPrefix("home: 0 new, 0 updated, 0 deleted, 0 skipped, 0 videos resolved; 1 page, 1 request"), "\(idle.stdout)")
        let stats = try await server.stats()
        #expect(stats.total == 1)
        #expect(stats.byPath["GET /v1/feed"] == ["304": 1])
        #expect(try await sqlite(scratch.database, dataTables) == before)
    }

    @Test func aStoredSessionIsReusedAcrossRuns() async throws {
        let server = try ReferenceServer(posts: 50)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        try await server.control("POST", "/_control/reset-stats")

        #expect(try await feedsync(["pull", "--config", config]).status == 0)

        #expect(try await server.stats().byPath["POST /v1/auth/login"] == nil)
    }

    @Test func rejectedCredentialsExit77WithOneSentenceAndNoSecret() async throws {
        let server = try ReferenceServer(posts: 10)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)

        let result = try await feedsync(["pull", "--config", config], environment: ["FEEDSYNC_PASSWORD": "wrong-horse-battery"])

        #expect(result.status == 77)
        #expect(result.stderr.contains("invalid_credentials"), "\(result.stderr)")
        #expect(!result.stderr.contains("wrong-horse-battery"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func anUnreachableServerExits69AndTheStatusRecordsTheError() async throws {
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")

        let result = try await feedsync(["pull", "--config", config])

        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("feedsync: home: "))
        let status = try await feedsync(["status", "--config", config, "--json"])
        #expect(status.status == 0)
        let report = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let rows = report?["feeds"] as? [[String: Any]]
        #expect((rows?.first?["lastError"] as? String)?.contains("127.0.0.1:9") == true)
        #expect(rows?.first?["consecutiveFailures"] as? Int == 1)
    }

    @Test func postsReadAndUnreadWorkOnTheMirror() async throws {
        let server = try ReferenceServer(posts: 30)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)

        #expect(try await feedsync(["read", "p0000030", "--config", config]).stdout == "home/p0000030 marked read\n")
        let unread = try await feedsync(["posts", "--config", config, "--unread", "--limit", "2", "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(unread.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.compactMap { $0["id"] as? String } == ["p0000029", "p0000028"])
        #expect(try await feedsync(["pull", "--config", config, "--full"]).status == 0)
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM post_state WHERE read_at IS NOT NULL") == "1", "a re-sync keeps read marks")
        let unknown = try await feedsync(["read", "p-nope", "--config", config])
        #expect(unknown.status == 66 && !unknown.stderr.contains("usage:"), "\(unknown.stderr)")
        #expect(unknown.stderr.split(separator: "\n").count == 1)
    }
}

/// The command line itself: help, version, usage errors and config errors.
@Suite(.endToEnd) struct CommandLineEndToEndTests {
    @Test func helpAndVersionExitZero() async throws {
        let help = try await feedsync(["--help"])
        #expect(help.status == 0 && help.stdout.contains("pull") && help.stdout.contains("config check"))
        for command in [["pull"], ["status"], ["posts"], ["read"], ["unread"], ["config", "check"]] {
            let result = try await feedsync(command + ["--help"])
            #expect(result.status == 0 && result.stdout.hasPrefix("usage: feedsync \(command.joined(separator: " "))"), "\(command)")
        }
        #expect(try await feedsync(["--version"]).stdout.hasPrefix("feedsync "))
        #expect(try await run(binaries.appendingPathComponent("feedsyncd"), ["--help"]).status == 0)
    }

    @Test(arguments: [["frobnicate"], [], ["pull", "--bogus"], ["posts", "--limit"], ["posts", "--limit", "zero"], ["read"]])
    func usageErrorsExit64(arguments: [String]) async throws {
        let result = try await feedsync(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("feedsync: ") && result.stderr.contains("usage:"))
    }

    @Test func aBadConfigExits78NamingTheKeyAndCreatesNoDatabase() async throws {
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: "htp://nowhere")

        for command in [["pull"], ["config", "check"]] {
            let result = try await feedsync(command + ["--config", config])
            #expect(result.status == 78)
            #expect(result.stderr == "feedsync: \(config): feeds[0].posts.baseURL: \"htp://nowhere\" is not an http(s) URL\n")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.database.path))
    }

    @Test func readOnlyCommandsOnAStoreNeverSyncedSaySoAndCreateNothing() async throws {
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")
        for command in [["status"], ["posts"], ["read", "home/p1"], ["unread", "p1"]] {
            let result = try await feedsync(command + ["--config", config], environment: [:])
            #expect(result.status == 66, "\(command): \(result.stderr)")
            #expect(result.stderr.hasSuffix("nothing synced yet: run feedsync pull\n"), "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.folder.path) == ["feedsync.json"])
    }

    @Test func theDefaultConfigIsFeedsyncJsonInTheWorkingFolderElseTheEnvironment() async throws {
        let scratch = try Scratch()
        _ = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")
        #expect(try await feedsync(["config", "check"], in: scratch.folder).status == 0)
        let elsewhere = try Scratch()
        #expect(try await feedsync(["config", "check"], in: elsewhere.folder).status == 78)
        let viaEnvironment = try await feedsync(["config", "check"], environment: ["FEEDSYNC_CONFIG": scratch.folder.appendingPathComponent("feedsync.json").path, "FEEDSYNC_PASSWORD": "x"], in: elsewhere.folder)
        #expect(viaEnvironment.status == 0)
    }

    @Test func theOfflineDemoSyncsTheRecordedFeedWithNoServer() async throws {
        let scratch = try Scratch()
        // The example config, with its relative paths made absolute so it runs from a scratch folder.
        let example = try String(contentsOf: repository.appendingPathComponent("config.example.json"), encoding: .utf8)
            .replacingOccurrences(of: "\"Fixtures/", with: "\"\(repository.path)/Fixtures/")
        try Data(example.utf8).write(to: scratch.folder.appendingPathComponent("feedsync.json"))

        let first = try await feedsync(["pull"], in: scratch.folder)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("demo: 118 new"), "\(first.stdout)")
        let second = try await feedsync(["pull"], in: scratch.folder)
        #expect(second.stdout.hasPrefix("demo: 0 new, 0 updated, 0 deleted, 0 skipped, 0 videos resolved; 1 page, 1 request"), "\(second.stdout)")
    }
}

/// Protecting the cache from its source.
@Suite(.endToEnd) struct MassDeletionEndToEndTests {
    @Test func aServerThatLostMostOfTheFeedCannotWipeTheCacheWithoutForceDelete() async throws {
        let scratch = try Scratch()
        let full = try ReferenceServer(posts: 100)
        let config = try scratch.writeConfig(baseURL: full.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)

        // The same account, answering from a server that now has only 10 of the 100 posts.
        let shrunk = try ReferenceServer(posts: 10)
        _ = try scratch.writeConfig(baseURL: shrunk.baseURL)

        let refused = try await feedsync(["pull", "--config", config, "--full"])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("it would delete 90 of 100 cached posts (90%)"), "\(refused.stderr)")
        #expect(try await postCount(scratch.database) == 100)

        #expect(try await feedsync(["pull", "--config", config, "--force-delete"]).status == 64, "--force-delete needs --full")
        let forced = try await feedsync(["pull", "--config", config, "--full", "--force-delete"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stdout.contains("90 deleted"), "\(forced.stdout)")
        #expect(try await storedPosts(scratch.database) == shrunk.snapshot())
    }
}
