import Foundation
import ProcessTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `feedsync add` and `feedsync remove` as real processes, against the fixture servers: every
/// change is checked before it is written, and leaves the rest of the config as it was.
@Suite(.endToEnd) struct AddRemoveEndToEndTests {
    func startWebFeeds(feeds: Int = 5, items: Int = 10) throws -> ReferenceServer {
        try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", String(feeds), "--items", String(items)])
    }

    /// A hand-written config: odd spacing, a `$comment`, nested objects on one line, mode 0640.
    func writeHandwrittenConfig(_ scratch: Scratch, _ server: ReferenceServer, extra: String = "") throws -> (path: String, bytes: Data) {
        let json = """
            {
                "$comment": "my feeds — written by hand",
                "store":   {"integration": "sqlite", "path": "feedsync.sqlite"},
                "feeds": [
                    { "name": "first", "interval": "1h",
                      "posts": {"integration": "webfeed", "url": "\(server.baseURL)/feeds/0.xml"} }\(extra)
                ]
            }

            """
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        chmod(url.path, 0o640)
        return (url.path, Data(json.utf8))
    }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o7777
    }

    /// The config's feeds as JSON objects.
    func feeds(_ path: String) throws -> [[String: Any]] {
        let root = try JSONSerialization.jsonObject(with: bytes(path)) as? [String: Any]
        return root?["feeds"] as? [[String: Any]] ?? []
    }

    func leftovers(_ scratch: Scratch) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: scratch.folder.path).filter { $0.hasSuffix(".new") }
    }

    // MARK: add, web feeds

    @Test func aFeedURLWithNoConfigYetCreatesOneNamedForItsTitleThatPulls() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let added = try await feedsync(["add", "\(server.baseURL)/feeds/3.xml"], in: scratch.folder)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("added feed feed-3 (web feed \"Feed 3\", \(server.baseURL)/feeds/3.xml) to feedsync.json"), "\(added.stdout)")
        #expect(added.stdout.contains("created feedsync.json with a SQLite store beside it"))
        let config = scratch.folder.appendingPathComponent("feedsync.json").path
        #expect(mode(config) == 0o600)
        let entry = try #require(try feeds(config).first)
        #expect(entry["name"] as? String == "feed-3")
        #expect((entry["posts"] as? [String: String]) == ["integration": "webfeed", "url": "\(server.baseURL)/feeds/3.xml"])

        let pulled = try await feedsync(["pull"], in: scratch.folder)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(try await postCount(scratch.database, feed: "feed-3") == 10)
    }

    @Test func aPageIsReadForItsFeedLinkWithRelativeLinksResolved() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, original) = try writeHandwrittenConfig(scratch, server)
        let added = try await feedsync(["add", "\(server.baseURL)/site/2/", "--config", config, "--interval", "30m"])
        #expect(added.status == 0, "\(added.stderr)")
        // The page's link is ../../atom/2.xml; a link in the body is not taken.
        let entry = try #require(try feeds(config).last)
        #expect(entry["name"] as? String == "feed-2")
        #expect(entry["interval"] as? String == "30m")
        #expect((entry["posts"] as? [String: String])?["url"] == "\(server.baseURL)/atom/2.xml")
        #expect(!added.stdout.contains("more feed"), "\(added.stdout)")
        let looks = (try await requestCount(server, "/site/2/"), try await requestCount(server, "/atom/2.xml"))
        #expect(looks == (1, 1), "one look at each")

        // The rest of the file is byte for byte as it was, the new entry at the end of feeds, the mode kept.
        let now = try bytes(config)
        let insertion = try #require(original.range(of: Data("} }".utf8))?.upperBound)
        #expect(now.prefix(insertion) == original.prefix(insertion))
        #expect(now.suffix(original.count - insertion) == original.suffix(original.count - insertion))
        #expect(mode(config) == 0o640)
        #expect(try await feedsync(["config", "check", "--config", config]).status == 0)

        // Removing it again gives back the very bytes the operator wrote.
        let removed = try await feedsync(["remove", "feed-2", "--config", config])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try bytes(config) == original)
        #expect(mode(config) == 0o640)
    }

    @Test func aPageWithSeveralFeedLinksGivesTheFirstUnderItsBaseAndListsTheOthers() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, server)
        let added = try await feedsync(["add", "\(server.baseURL)/site/many/", "--config", config, "--name", "three"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "added feed three (web feed \"Feed 3\", \(server.baseURL)/feeds/3.xml?x=1&y=2) to \(config)\n"
                + "the page names 1 more feed: \(server.baseURL)/atom/3.xml\n")
        #expect((try feeds(config).last?["posts"] as? [String: String])?["url"] == "\(server.baseURL)/feeds/3.xml?x=1&y=2")
    }

    func requestCount(_ server: ReferenceServer, _ path: String) async throws -> Int {
        (try await server.stats().byPath["GET \(path)"] ?? [:]).values.reduce(0, +)
    }

    @Test func aPageWithoutAFeedLinkIsOneSentenceAndNothingIsWritten() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, original) = try writeHandwrittenConfig(scratch, server)
        let result = try await feedsync(["add", "\(server.baseURL)/site/none/", "--config", config])
        #expect(result.status == 69)
        #expect(result.stderr == "feedsync: finding a feed at \(server.baseURL)/site/none/: the page names no feed "
                + "(no <link rel=\"alternate\"> of an RSS, Atom or JSON Feed type); add the feed's own address\n")
        #expect(try bytes(config) == original)
        #expect(try leftovers(scratch).isEmpty)
    }

    @Test func aNameInUseIsRefusedWithExit64AndNothingIsWritten() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, original) = try writeHandwrittenConfig(scratch, server)
        let result = try await feedsync(["add", "\(server.baseURL)/feeds/1.xml", "--name", "first", "--config", config])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("feedsync: feedsync.json already has a feed named \"first\"; choose another with --name\n")
                || result.stderr.contains("already has a feed named \"first\"; choose another with --name"), "\(result.stderr)")
        #expect(try bytes(config) == original)

        // A derived name that is taken is made unique instead.
        let second = try await feedsync(["add", "\(server.baseURL)/feeds/1.xml", "--config", config])
        let third = try await feedsync(["add", "\(server.baseURL)/atom/1.xml", "--config", config])
        #expect(second.status == 0 && third.status == 0, "\(second.stderr)\(third.stderr)")
        #expect(try feeds(config).compactMap { $0["name"] as? String } == ["first", "feed-1", "feed-1-2"])
    }

    @Test func aChangeThatDoesNotCheckOutIsNeverWritten() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, original) = try writeHandwrittenConfig(scratch, server)
        // As a user runs it: without the tests' short intervals.
        let result = try await feedsync(["add", "\(server.baseURL)/feeds/1.xml", "--interval", "1s", "--config", config],
                                        environment: ["FEEDSYNC_TEST_SHORT_INTERVALS": "0"])
        #expect(result.status == 78)
        #expect(result.stderr.contains("feeds[1].interval: \"1s\" is shorter than the minimum of 10s (the change was not written; "), "\(result.stderr)")
        #expect(try bytes(config) == original)
        #expect(mode(config) == 0o640)
        #expect(try leftovers(scratch).isEmpty, "the checked temporary file is gone")
    }

    @Test func anEditMadeWhileAddWaitedIsNeverOverwritten() async throws {
        // A feed server that answers only when told: the config is edited by hand in between.
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", "-c", """
            import socket, sys
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
            print(s.getsockname()[1], flush=True)
            c, _ = s.accept()
            print("accepted", flush=True)
            c.recv(65536)
            sys.stdin.readline()
            body = b'<?xml version="1.0"?><rss version="2.0"><channel><title>Late</title></channel></rss>'
            c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/rss+xml\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % len(body) + body)
            c.close()
            """]
        let toServer = makePipe(), fromServer = makePipe()
        defer { closeEnds(toServer, fromServer) }
        server.standardInput = toServer
        server.standardOutput = fromServer
        try launch(server)
        defer { if server.isRunning { server.terminate() } }
        func line() -> String {
            var data = Data()
            while data.last != 0x0A {
                let chunk = fromServer.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                data += chunk
            }
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let port = line()

        let web = try startWebFeeds()
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, web)
        let add = Process()
        add.executableURL = binaries.appendingPathComponent("feedsync")
        add.arguments = ["add", "http://127.0.0.1:\(port)/feed.xml", "--config", config]
        let errors = makePipe()
        defer { closeEnds(errors) }
        add.standardError = errors
        add.standardOutput = FileHandle.nullDevice
        try launch(add)
        // The config was read before the request was made; now it changes by hand.
        #expect(line() == "accepted")
        let edited = Data(try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "\"1h\"", with: "\"2h\"").utf8)
        try edited.write(to: URL(fileURLWithPath: config))
        toServer.fileHandleForWriting.write(Data("go\n".utf8))
        // Polled: `waitUntilExit()` would hold one of the test run's few cooperative threads.
        while add.isRunning { try await Task.sleep(for: .milliseconds(50)) }

        #expect(add.terminationStatus == 75)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(stderr == "feedsync: writing \(config): it changed while this command ran, so the change was not written; run the command again\n")
        #expect(try bytes(config) == edited)
        #expect(try leftovers(scratch).isEmpty)
    }

    // MARK: add, OPML

    @Test func anOPMLFileOfAThousandOutlinesIsOneEditWithUniqueNames() async throws {
        let server = try startWebFeeds(feeds: 1_000, items: 2)
        let scratch = try Scratch()
        let (config, original) = try writeHandwrittenConfig(scratch, server)
        // Titles repeat (every 400th), one outline has none, one is the feed the config has already.
        var outlines = (1..<999).map { #"<outline type="rss" text="Blog \#($0 % 400)" xmlUrl="\#(server.baseURL)/feeds/\#($0).xml"/>"# }
        outlines.append(#"<outline type="rss" xmlUrl="\#(server.baseURL)/feeds/999.xml"/>"#)
        outlines.append(#"<outline type="rss" title="Again" xmlUrl="\#(server.baseURL)/feeds/0.xml"/>"#)
        let opml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <opml version="2.0"><head><title>Mine</title></head><body><outline text="Folder">
            \(outlines.joined(separator: "\n"))
            </outline></body></opml>
            """
        let file = scratch.folder.appendingPathComponent("subscriptions.opml")
        try Data(opml.utf8).write(to: file)

        let result = try await feedsync(["add", file.path, "--config", config])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("added 999 web feeds from \(file.path) to \(config) (1 already there or listed twice)\n"), "\(result.stdout)")
        let entries = try feeds(config)
        let names = entries.compactMap { $0["name"] as? String }
        #expect(names.count == 1_000 && Set(names).count == 1_000)
        #expect(names.prefix(4) == ["first", "blog-1", "blog-2", "blog-3"])
        #expect(names.contains("blog-1-2") && names.contains("blog-1-3") && !names.contains("blog-1-4"))
        #expect(names.last == "127-0-0-1", "an outline without a title is named for its host")
        let urls = entries.compactMap { ($0["posts"] as? [String: String])?["url"] }
        #expect(Set(urls).count == 1_000)
        #expect(try bytes(config).prefix(original.count - 16) == original.prefix(original.count - 16), "the first entry is untouched")
        #expect(try await feedsync(["config", "check", "--config", config]).status == 0)
        #expect(try await requestCount(server, "/feeds/1.xml") == 0, "an OPML file is read, not its feeds fetched")

        // The same file again adds nothing and says so.
        let again = try await feedsync(["add", file.path, "--config", config])
        #expect(again.status == 65)
        #expect(again.stderr.contains("has every feed it lists already"), "\(again.stderr)")

        // A path that is not there, or a folder, is read as a file (nothing is fetched).
        let missing = try await feedsync(["add", "./missing.opml", "--config", config])
        #expect(missing.status == 66 && missing.stderr == "feedsync: reading ./missing.opml: no such file\n", "\(missing.stderr)")
        let folder = try await feedsync(["add", scratch.folder.path, "--config", config])
        #expect(folder.status == 66 && folder.stderr.hasSuffix(": it is a folder, not an OPML file\n"), "\(folder.stderr)")
    }

    // MARK: add, accounts

    @Test func aMastodonAccountIsReadWithTheLoginOnItsServer() async throws {
        let mastodon = try ReferenceServer(script: "Fixtures/mastodon/server.py", arguments: ["--statuses", "150", "--token", "tok-abc"])
        let (data, _) = try await URLSession.shared.data(from: URL(string: mastodon.baseURL + "/_control/accounts")!)
        let accounts = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
        let acct = try #require(accounts.first?["acct"] as? String)
        let accountID = try #require(accounts.first?["id"] as? String)
        let web = try startWebFeeds()
        let server = "127.0.0.1:\(mastodon.port)"

        // Without a login on that server: one sentence, exit 64, nothing written.
        let scratch = try Scratch()
        let (config, original) = try writeHandwrittenConfig(scratch, web)
        let refused = try await feedsync(["add", "@\(acct)@\(server)", "--config", config])
        #expect(refused.status == 64)
        #expect(refused.stderr.hasPrefix("feedsync: \(config) has no Mastodon login on \(server) to read @\(acct)@\(server) with; "
                                         + "run `feedsync login mastodon \(server)` first\n"), "\(refused.stderr)")
        #expect(try bytes(config) == original)

        // With one: the account's posts, through the login's token.
        let signedIn = try Scratch()
        let loginConfig = try signedIn.writeMastodonConfig(server: mastodon.baseURL)
        let added = try await feedsync(["add", "@\(acct)@\(server)", "--config", loginConfig])
        #expect(added.status == 0, "\(added.stderr)")
        let name = "\(acct)-127.0.0.1-\(mastodon.port)"
        #expect(added.stdout.hasPrefix("added feed \(name) (@\(acct)@\(server)'s posts, read with the login on \(server)) to "), "\(added.stdout)")
        let entry = try #require(try feeds(loginConfig).last)
        #expect(entry["name"] as? String == name)
        #expect((entry["posts"] as? [String: String]) == ["integration": "mastodon", "server": mastodon.baseURL,
                                                          "accessTokenEnv": "MASTODON_TOKEN", "timeline": "account:@\(acct)"])
        let pulled = try await feedsync(["pull", "--config", loginConfig, "--feed", name], environment: ["MASTODON_TOKEN": "tok-abc"])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let expected = try await mastodon.control("GET", "/_control/timeline?name=account:\(accountID)")["ids"] as? [String] ?? []
        #expect(!expected.isEmpty)
        let stored = try await sqlite(signedIn.database, "SELECT id FROM posts WHERE feed = '\(name)'").split(separator: "\n").map(String.init)
        #expect(Set(stored) == Set(expected))
    }

    @Test func aBlueskyHandleIsReadWithTheBlueskyLogin() async throws {
        let password = "app-pass-SECRET-1"
        let bluesky = try ReferenceServer(script: "Fixtures/bluesky/server.py", arguments: ["--posts", "400", "--password", password])
        let web = try startWebFeeds()
        let scratch = try Scratch()
        let (config, original) = try writeHandwrittenConfig(scratch, web)
        let refused = try await feedsync(["add", "@grace.bsky.social", "--config", config])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("has no Bluesky login to read @grace.bsky.social with; run `feedsync login bluesky YOUR-HANDLE` first"),
                "\(refused.stderr)")
        #expect(try bytes(config) == original)

        // What is pasted reaches no terminal raw.
        let hostile = try await feedsync(["add", "did:plc:\u{1b}]0;owned\u{07}", "--config", config])
        #expect(hostile.status == 64)
        #expect(hostile.stderr.hasPrefix("feedsync: \"did:plc:\\u{1b}]0;owned\\u{7}\" is not a DID; write did:plc:… or did:web:…\n"), "\(hostile.stderr)")
        #expect(try bytes(config) == original)

        let (withLogin, _) = try writeHandwrittenConfig(scratch, web, extra: """
            ,
                    {"name": "sky", "posts": {"integration": "bluesky", "service": "\(bluesky.baseURL)", "identifier": "me.test",
                                              "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home"}}
            """)
        let added = try await feedsync(["add", "grace.bsky.social", "--config", withLogin])
        #expect(added.status == 0, "\(added.stderr)")
        let entry = try #require(try feeds(withLogin).last)
        #expect(entry["name"] as? String == "grace.bsky.social")
        #expect((entry["posts"] as? [String: String]) == ["integration": "bluesky", "service": bluesky.baseURL, "identifier": "me.test",
                                                          "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "author:@grace.bsky.social"])
        let pulled = try await feedsync(["pull", "--config", withLogin, "--feed", "grace.bsky.social"], environment: ["BLUESKY_APP_PASSWORD": password])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let expected = try await bluesky.control("GET", "/_control/timeline?name=getAuthorFeed&actor=grace.bsky.social")["ids"] as? [String] ?? []
        #expect(!expected.isEmpty)
        let stored = try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = 'grace.bsky.social'").split(separator: "\n").map(String.init)
        #expect(Set(stored) == Set(expected))
    }
}
