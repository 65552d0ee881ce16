import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real binaries against `Fixtures/hostile/server.py`: each class of hostile answer ends in
/// one clear sentence and its exit code, within seconds, without a crash, a leaked token or a
/// runaway process.
@Suite(.endToEnd) struct HostileServerTests {
    let mastodonToken = ["MASTODON_TOKEN": "hostile-config-token-SECRET3"]

    /// Every exit of a run that must not have crashed: a signal would show as 128 + n.
    func expectNoCrash(_ result: Finished, _ what: String) {
        #expect(result.status < 128, "\(what) crashed: \(result.status) \(result.stderr)")
    }

    // MARK: Redirects

    @Test(arguments: [("redirect-cross-origin", "301"), ("redirect-cross-origin", "302"), ("redirect-cross-origin", "307"),
                      ("redirect-cross-origin", "308"), ("redirect-cross-host", "301")])
    func aRedirectToAnotherOriginIsRefusedAndNoTokenFollowsIt(mode: String, status: String) async throws {
        let catcher = try hostileServer("catcher")
        let server = try hostileServer(mode, ["--target-port", String(catcher.port), "--redirect-status", status])
        let scratch = try Scratch()

        let pull = try await feedsync(["pull", "--config", try scratch.writeConfig(baseURL: server.baseURL)])
        let mastodon = try await feedsync(["pull", "--config", try scratch.writeMastodonConfig(server: server.baseURL, name: "m.json")],
                                          environment: mastodonToken)

        for result in [pull, mastodon] {
            #expect(result.status == 69, "\(result.stderr)")
            #expect(result.stderr.contains("redirected (\(status)) to http://"), "\(result.stderr)")
        }
        #expect(try await catcher.hostileStats().authorization.isEmpty, "a token reached another origin")
        #expect(try await catcher.hostileStats().requests.isEmpty)
        #expect(try await server.hostileStats().requests["GET /v1/feed"] == 1, "a certain refusal is not retried")
    }

    @Test func aRedirectWithinTheOriginIsFollowedWithItsToken() async throws {
        let server = try hostileServer("redirect-same-origin")
        let scratch = try Scratch()
        let pull = try await feedsync(["pull", "--config", try scratch.writeConfig(baseURL: server.baseURL)])
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(try await postCount(scratch.database) == 30)
    }

    @Test func endlessRedirectsAndRedirectedLoginsStop() async throws {
        let loop = try hostileServer("redirect-loop")
        let scratch = try Scratch()
        let looped = try await feedsync(["pull", "--config", try scratch.writeConfig(baseURL: loop.baseURL)])
        #expect(looped.status == 69 && looped.stderr.contains("redirected more than 5 times"), "\(looped.stderr)")

        let post = try hostileServer("redirect-post")
        let login = try await feedsync(["pull", "--config", try scratch.writeConfig(baseURL: post.baseURL)])
        #expect(login.status == 69 && login.stderr.contains("only GET requests follow redirects"), "\(login.stderr)")
        #expect(try await post.hostileStats().requests["POST /v1/auth/login2"] == nil, "the password was sent again")
    }

    // MARK: Memory and time

    @Test(arguments: ["endless-body", "huge-body", "gzip-bomb", "deflate-bomb"])
    func anOversizedAnswerIsCutOffWithinTheLimit(mode: String) async throws {
        let server = try hostileServer(mode)
        let scratch = try Scratch()
        for (config, path) in [(try scratch.writeConfig(baseURL: server.baseURL), "GET /v1/feed"),
                               (try scratch.writeMastodonConfig(server: server.baseURL, name: "m.json"), "GET /api/v1/timelines/home")] {
            let (result, peakMiB) = try await feedsyncMeasuringMemory(["pull", "--config", config],
                                                                      environment: ["FEEDSYNC_PASSWORD": "demo"].merging(mastodonToken) { a, _ in a })
            #expect(result.status == 69, "\(mode): \(result.stderr)")
            #expect(result.stderr.contains("maxResponseBytes"), "\(mode): \(result.stderr)")
            #expect(peakMiB > 0 && peakMiB < 256, "\(mode): peak RSS \(peakMiB) MiB")
            // Read once, and cut off near the 16 MiB limit: what the server got into the socket is
            // the limit plus what loopback's buffers hold, not the endless or 200 MiB body.
            let stats = try await server.control("GET", "/_control/stats")
            #expect((stats["requests"] as? [String: Int])?[path] == 1, "\(mode): \(stats["requests"] ?? "")")
            let sent = (stats["bytes_sent"] as? [String: Int])?[path] ?? -1
            #expect(sent > 0 && sent < 48 << 20, "\(mode): \(path) sent \(sent) bytes")
        }
    }

    @Test func validJSONNestedTooDeepIsReportedAsTooDeepAndNotRetried() async throws {
        let server = try hostileServer("deep-json", ["--posts", "5"])
        let scratch = try Scratch()
        for (config, path) in [(try scratch.writeConfig(baseURL: server.baseURL), "GET /v1/feed"),
                               (try scratch.writeMastodonConfig(server: server.baseURL, name: "m.json"), "GET /api/v1/timelines/home")] {
            _ = try await server.control("POST", "/_control/reset-stats")
            let result = try await feedsync(["pull", "--config", config], environment: ["FEEDSYNC_PASSWORD": "demo"].merging(mastodonToken) { a, _ in a })
            #expect(result.status == 69, "\(result.stderr)")
            #expect(result.stderr.contains("the body nests values more than 512 deep"), "\(result.stderr)")
            #expect(!result.stderr.contains("not JSON") && !result.stderr.contains("gave up after"), "\(result.stderr)")
            #expect(try await server.hostileStats().requests[path] == 1, "asked once: the same body cannot become readable")
        }
    }

    @Test func aServerThatDripsBytesHitsTheDeadline() async throws {
        let server = try hostileServer("slow-drip")
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        var text = try String(contentsOfFile: config, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"pageSize\": 100", with: "\"pageSize\": 100, \"deadlineSeconds\": 3")
        try Data(text.utf8).write(to: URL(fileURLWithPath: config))

        let pull = try await feedsync(["pull", "--config", config])

        // The deadline is the client's own, and so is the sentence that reports it.
        #expect(pull.status == 69 && pull.stderr.contains("no complete answer within 3 s (deadlineSeconds)"), "\(pull.stderr)")
        #expect(try await server.hostileStats().requests["GET /v1/feed"] == 1, "one attempt, not a retry storm")
    }

    // MARK: Loops

    @Test(arguments: ["cursor-repeat", "cursor-cycle"])
    func cursorsThatGoInCirclesEndTheSyncKeepingWhatWasRead(mode: String) async throws {
        let server = try hostileServer(mode)
        let scratch = try Scratch()
        for (config, environment) in [(try scratch.writeConfig(baseURL: server.baseURL), ["FEEDSYNC_PASSWORD": "demo"]),
                                      (try scratch.writeMastodonConfig(server: server.baseURL, name: "m.json"), mastodonToken)] {
            let pull = try await feedsync(["pull", "--config", config], environment: environment)
            #expect(pull.status == 69 && pull.stderr.contains("go in circles"), "\(mode): \(pull.stderr)")
        }
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts") != "0", "pages read before the loop stay committed")
        let requests = try await server.hostileStats().requests
        // Each walk stops at the first request it would make again (Mastodon's may have asked for
        // that page ahead, once).
        let walk = mode == "cursor-cycle" ? 4 : 2
        #expect(requests["GET /v1/feed"] == walk && (walk ... walk + 1).contains(requests["GET /api/v1/timelines/home"] ?? 0), "\(requests)")
    }

    @Test func aForwardLinkToItselfEndsTheSyncAndTheDaemonShowsIt() async throws {
        let server = try hostileServer("link-same-forward")
        let scratch = try Scratch()
        // Full pages, so the forward walk would go on to the link it was given.
        let config = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "pageSize": 10"#)
        #expect(try await feedsync(["pull", "--config", config], environment: mastodonToken).status == 0)

        let again = try await feedsync(["pull", "--config", config], environment: mastodonToken)
        #expect(again.status == 69 && again.stderr.contains("go in circles"), "\(again.stderr)")

        let status = try await feedsync(["status", "--config", config], environment: [:])
        #expect(status.stdout.contains("go in circles"), "status shows the error: \(status.stdout)")
    }

    // MARK: Numbers, dates, URLs

    @Test func hostileNumbersDatesAndURLsAreSkippedWithReasonsNotCrashes() async throws {
        let server = try hostileServer("big-numbers")
        let scratch = try Scratch()

        let login = try await feedsync(["pull", "--config", try scratch.writeConfig(baseURL: server.baseURL)])
        expectNoCrash(login, "an expires_in of 1e16")
        #expect(login.status == 69 && login.stderr.contains("expires_in"), "\(login.stderr)")

        let mastodon = try await feedsync(["pull", "--config", try scratch.writeMastodonConfig(server: server.baseURL, name: "m.json")],
                                          environment: mastodonToken)
        expectNoCrash(mastodon, "a duration of 1e300")
        #expect(mastodon.status == 0, "\(mastodon.stderr)")
        #expect(mastodon.stderr.contains("skipped"), "\(mastodon.stderr)")
        #expect(!mastodon.stderr.contains("Index "), "a skip reason names fields, not array positions: \(mastodon.stderr)")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM videos WHERE duration_ms < 0 OR duration_ms > 86400000 OR stream_url NOT LIKE 'http%'") == "0")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE reply_count < 0") == "0")
    }

    @Test func anImpossibleCalendarDateIsABadItem() async throws {
        let server = try hostileServer("big-numbers")
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        // The login answers expires_in 1e16 in this mode, so give the feed a session the server takes.
        try Data(#"{"version": 1, "sessions": {"home": {"backend": "httpapi \#(server.baseURL) user demo", "accessToken": "t"}}}"#.utf8)
            .write(to: URL(fileURLWithPath: scratch.database.path + ".sessions"))

        let pull = try await feedsync(["pull", "--config", config])

        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(pull.stderr.contains("2026-02-30T00:00:00Z\" is not an RFC 3339 time"), "\(pull.stderr)")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE like_count < 0 OR reply_count < 0") == "0")
    }

    // MARK: Links

    @Test func linksThatAreHugeMalformedOrElsewhereFailOnceWithASentence() async throws {
        let catcher = try hostileServer("catcher")
        let cases = [("link-huge", "header fields are larger than"), ("link-malformed", "Link header"),
                     ("link-other-port", "points to http://127.0.0.1:\(catcher.port)")]
        for (mode, sentence) in cases {
            let server = try hostileServer(mode, ["--target-port", String(catcher.port)])
            let scratch = try Scratch()
            let pull = try await feedsync(["pull", "--config", try scratch.writeMastodonConfig(server: server.baseURL)], environment: mastodonToken)
            #expect(pull.status == 69 && pull.stderr.contains(sentence), "\(mode): \(pull.stderr)")
            #expect(pull.stderr.split(separator: "\n").count == 1 && !pull.stderr.contains("(?)"), "\(mode): \(pull.stderr)")
            #expect(try await server.hostileStats().requests["GET /api/v1/timelines/home"] == 1, "\(mode): a certain refusal is not retried")
        }
        #expect(try await catcher.hostileStats().authorization.isEmpty)
    }

    @Test func commasInsideLinkURLsPageCorrectly() async throws {
        let server = try hostileServer("link-commas")
        let scratch = try Scratch()
        let pull = try await feedsync(["pull", "--config", try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "pageSize": 5"#)],
                                      environment: mastodonToken)
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(try await postCount(scratch.database, feed: "social") == 30)
    }

    // MARK: Terminal

    @Test func controlCharactersNeverReachTheTerminalButStayInTheMirror() async throws {
        let server = try hostileServer("control-chars")
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL, pageSize: 10)
        let mastodon = try scratch.writeMastodonConfig(server: server.baseURL, name: "m.json")

        var outputs = [try await feedsync(["pull", "--config", config]),
                       try await feedsync(["pull", "--config", mastodon], environment: mastodonToken)]
        outputs += [try await feedsync(["posts", "--config", config, "--limit", "100"]),
                    try await feedsync(["posts", "--config", config, "--limit", "100", "--json"]),
                    try await feedsync(["status", "--config", config])]
        let daemon = try DaemonProcess(config: mastodon, in: scratch, environment: mastodonToken, arguments: ["--log-level", "debug"])
        _ = try await eventually { daemon.log.contains("sync_done") || daemon.log.contains("sync_failed") }
        daemon.signal(SIGTERM)
        _ = await daemon.exits()

        #expect(outputs[0].status == 0 && outputs[1].status == 0, "\(outputs[0].stderr) \(outputs[1].stderr)")
        let printed = outputs.map { $0.stdout + $0.stderr }.joined() + daemon.log
        for forbidden: Unicode.Scalar in ["\u{1B}", "\u{07}", "\u{08}", "\u{7F}", "\u{9B}", "\u{202E}", "\r"] {
            #expect(!printed.unicodeScalars.contains(forbidden), "U+\(String(forbidden.value, radix: 16)) was printed")
        }
        #expect(!printed.contains("\nAll good"), "a forged line was printed")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE instr(text, char(27)) > 0") != "0",
                "the mirror keeps the text as received")
    }

    // MARK: Rate limits

    @Test(arguments: ["rate-limit-httpapi", "rate-limit-reset", "rate-limit-mastodon"])
    func aSpentQuotaIsWaitedOutAndThePullSaysSo(mode: String) async throws {
        let server = try hostileServer(mode)
        let scratch = try Scratch()
        let config = mode == "rate-limit-mastodon" ? try scratch.writeMastodonConfig(server: server.baseURL) : try scratch.writeConfig(baseURL: server.baseURL)

        let started = Date()
        let pull = try await feedsync(["pull", "--config", config], environment: ["FEEDSYNC_PASSWORD": "demo"].merging(mastodonToken) { a, _ in a })

        #expect(pull.status == 0, "\(mode): \(pull.stderr)")
        #expect(pull.stderr.contains("waiting"), "\(mode): \(pull.stderr)")
        #expect(Date().timeIntervalSince(started) >= 1.5)
    }
}

/// Hostile local files and config: symlinks, modes, unreadable places, credentials in URLs.
@Suite(.endToEnd) struct HostileFilesTests {
    @Test func aLockFileThatIsASymlinkIsNeverFollowed() async throws {
        let server = try ReferenceServer(posts: 5)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        let victim = scratch.folder.appendingPathComponent("precious.txt")
        try Data("keep me\n".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(atPath: scratch.database.path + ".lock", withDestinationPath: victim.path)

        let pull = try await feedsync(["pull", "--config", config])

        #expect(pull.status == 70 && pull.stderr.contains("symbolic link"), "\(pull.stderr)")
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep me\n")
    }

    @Test func aStorePathThatIsASymlinkIsRefusedAndCreatesNothing() async throws {
        let server = try ReferenceServer(posts: 5)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        let target = scratch.folder.appendingPathComponent("elsewhere.sqlite")
        try FileManager.default.createSymbolicLink(atPath: scratch.database.path, withDestinationPath: target.path)

        let pull = try await feedsync(["pull", "--config", config])

        #expect(pull.status == 70 && pull.stderr.contains("is a symbolic link"), "\(pull.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test func anExistingWorldReadableFileEndsUpPrivate() async throws {
        let server = try ReferenceServer(posts: 5)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        _ = FileManager.default.createFile(atPath: scratch.database.path, contents: nil, attributes: [.posixPermissions: 0o644])

        #expect(try await feedsync(["pull", "--config", config]).status == 0)

        // SQLite removes the WAL and shared-memory files when the last connection closes cleanly.
        for file in [scratch.database.path, scratch.database.path + "-wal", scratch.database.path + "-shm", scratch.database.path + ".sessions.sqlite"]
        where FileManager.default.fileExists(atPath: file) {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file) has mode \(String(mode ?? 0, radix: 8))")
        }
    }

    @Test func storeOpenFailuresNameThePathAndTheReason() async throws {
        let scratch = try Scratch()
        let missing = """
            {"store": {"path": "no/such/folder/feedsync.sqlite"},
             "feeds": [{"name": "home", "posts": {"integration": "httpapi", "baseURL": "http://127.0.0.1:9", "username": "u", "passwordEnv": "FEEDSYNC_PASSWORD"}}]}
            """
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(missing.utf8).write(to: config)
        let pull = try await feedsync(["pull", "--config", config.path])
        #expect(pull.status == 70 && pull.stderr.contains("no/such/folder does not exist"), "\(pull.stderr)")

        try FileManager.default.createDirectory(at: scratch.database, withIntermediateDirectories: true)
        let folder = try await feedsync(["pull", "--config", try scratch.writeConfig(baseURL: "http://127.0.0.1:9")])
        #expect(folder.status == 70 && folder.stderr.contains("\(scratch.database.path): it is not a regular file"), "\(folder.stderr)")
    }

    @Test func aStaleLockOfALiveUnrelatedProcessIsNotCalledDead() async throws {
        let server = try ReferenceServer(posts: 5)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        try Data("pid=1 holder=feedsync_pull since=2026-01-01T00:00:00Z\n".utf8).write(to: URL(fileURLWithPath: scratch.database.path + ".lock"))

        let pull = try await feedsync(["pull", "--config", config])

        #expect(pull.status == 0)
        #expect(pull.stderr.contains("process 1, which no longer held it") && !pull.stderr.contains("no longer running"), "\(pull.stderr)")
    }

    @Test(arguments: [
        (#"{"feeds": [{"name": "a", "posts": {}},]}"#, "line 1, column 38: trailing comma before \"]\""),
        ("{\n  \"feeds\": [],\n  \"feeds\": []\n}", "line 3, column 3: duplicate key \"feeds\""),
        ("{\n  \"feeds\": [\n    {\"name\": \"a\"\n  ]\n}", "line 4, column 3"),
        (#"{"daemon": {"heartbeat": "0.0001s"}, "feeds": [{"name": "a", "posts": {"integration": "httpapi", "fixture": "x", "username": "u", "passwordEnv": "P"}}]}"#,
         "daemon.heartbeat: \"0.0001s\" is shorter than the minimum of 1s"),
        (#"{"feeds": [{"name": "a", "interval": "1e300h", "posts": {"integration": "httpapi", "fixture": "x", "username": "u", "passwordEnv": "P"}}]}"#,
         "feeds[0].interval: \"1e300h\" is longer than the maximum of 30 days"),
        (#"{"feeds": [{"name": "a", "posts": {"integration": "httpapi", "baseURL": "http://bob:hunter2@127.0.0.1:9", "username": "u", "passwordEnv": "P"}}]}"#,
         "must not carry a user name or password"),
    ])
    func aHostileConfigIsOneSentenceWithItsPlace(json: String, expected: String) async throws {
        let scratch = try Scratch()
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: config)
        for command in [["config", "check"], ["pull"]] {
            let result = try await feedsync(command + ["--config", config.path], environment: ["FEEDSYNC_TEST_SHORT_INTERVALS": "0"])
            #expect(result.status == 78 && result.stderr.contains(expected), "\(command): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1 && !result.stderr.contains("hunter2"), "\(result.stderr)")
        }
    }
}
