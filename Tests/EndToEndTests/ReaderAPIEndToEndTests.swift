import Foundation
import PostgresTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The Google Reader API of a real `feedsyncd`, read by a client written from the API's
/// documentation in NetNewsWire's order (Fixtures/readerapi/greader_client.py): ids with
/// continuation, contents, then marks that round-trip both ways with `feedsync read`/`star`,
/// on a real SQLite file and on a PostgreSQL server the tests start.
@Suite(.endToEnd, .serialized) struct ReaderAPIEndToEndTests {
    /// The item ids of `feed`'s posts p0000001…p0000025 as the listener derives them (the first
    /// 63 bits of SHA-256 of `feed\nid`, in decimal), computed apart from its code, by Python.
    static func itemIDs(_ feed: String) async throws -> [String: String] {
        let script = """
            import hashlib, json, sys
            ids = ["p%07d" % n for n in range(1, 26)]
            print(json.dumps({i: str(int(hashlib.sha256((sys.argv[1] + "\\n" + i).encode()).hexdigest()[:16], 16) & 0x7FFFFFFFFFFFFFFF) for i in ids}))
            """
        let result = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, feed])
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String], "\(result.stderr)")
    }

    /// Runs the client; what it saw.
    static func client(_ base: String, _ scratch: Scratch, _ arguments: [String] = []) async throws -> [String: Any] {
        let passwordFile = scratch.folder.appendingPathComponent("reader-password")
        try Data("correct horse battery\n".utf8).write(to: passwordFile)
        let script = repository.appendingPathComponent("Fixtures/readerapi/greader_client.py").path
        let result = try await run(URL(fileURLWithPath: "/usr/bin/env"),
                                   ["python3", script, "--base", base, "--user", "ada", "--password-file", passwordFile.path, "--page", "10"]
                                   + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    static func posts(_ config: String, _ flags: [String]) async throws -> [String] {
        let listed = try await feedsync(["posts", "--config", config, "--json", "--limit", "100"] + flags)
        let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        return rows?.compactMap { $0["id"] as? String } ?? []
    }

    func roundTrip(config: String, scratch: Scratch) async throws {
        let port = try MetricsEndToEndTests.freePort()
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        root["serve"] = ["listen": "127.0.0.1:\(port)"]
        try JSONSerialization.data(withJSONObject: root).write(to: URL(fileURLWithPath: config))
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        #expect(try await feedsync(["serve-user", "add", "ada", "--config", config], input: "correct horse battery\n").status == 0)
        let feed = ((root["feeds"] as? [[String: Any]])?.first?["name"] as? String) ?? ""
        // Marked in feedsync before the app looks: the app must see it.
        #expect(try await feedsync(["read", "\(feed)/p0000025", "--config", config]).status == 0)
        #expect(try await feedsync(["star", "\(feed)/p0000024", "--config", config]).status == 0)

        let daemon = try DaemonProcess(config: config, in: scratch)
        defer { daemon.signal(SIGKILL) }
        let base = "http://127.0.0.1:\(port)"
        #expect(try await eventually { try await ReaderListenerEndToEndTests.curl([base + "/reader/api/0/user-info"]).status == 401 },
                "\(daemon.log)")

        let ids = try await Self.itemIDs(feed)
        func id(_ post: Int) -> String { ids[String(format: "p%07d", post)] ?? "" }
        let first = try await Self.client(base, scratch)
        let newestFirst = (1...25).reversed().map(id)
        #expect(first["all"] as? [String] == newestFirst, "25 ids, newest first, through continuations")
        #expect(first["pages"] as? Int == 3)
        #expect(first["unread"] as? [String] == Array(newestFirst.dropFirst()))
        #expect(first["starred"] as? [String] == [id(24)])
        #expect(first["subscriptions"] as? [String] == ["feed/\(feed)"])
        #expect((first["unread_counts"] as? [String: Int])?["feed/\(feed)"] == 24)
        let items = first["items"] as? [[String: Any]] ?? []
        #expect(items.count == 25)
        #expect(items.first?["read"] as? Bool == true && items.first?["starred"] as? Bool == false)
        #expect(items.dropFirst().first?["starred"] as? Bool == true)

        // Marked in the app: feedsync sees it.
        let marking = try await Self.client(base, scratch, ["--mark-read", id(1), "--star", id(2),
                                                            "--unstar", id(24)])
        let edits = marking["edits"] as? [[Any]] ?? []
        #expect(edits.count == 3 && edits.allSatisfy { $0.first as? Int == 200 && $0.last as? String == "OK" }, "\(edits)")
        #expect(try await Self.posts(config, ["--starred"]) == ["p0000002"])
        #expect(try await !Self.posts(config, ["--unread"]).contains("p0000001"))
        #expect(try await Self.posts(config, ["--unread"]).count == 23)

        let all = try await Self.client(base, scratch, ["--mark-all", "feed/\(feed)"])
        #expect((all["edits"] as? [[Any]])?.first?.first as? Int == 200)
        #expect(try await Self.posts(config, ["--unread"]).isEmpty, "mark-all-as-read reached the store")
        #expect(try await Self.posts(config, ["--starred"]) == ["p0000002"], "and left the stars")
    }

    @Test func aReaderAppReadsAndMarksTheMirrorOnSQLite() async throws {
        let server = try ReferenceServer(posts: 25)
        let scratch = try Scratch()
        try await roundTrip(config: try scratch.writeConfig(baseURL: server.baseURL, interval: "1h"), scratch: scratch)
    }

    @Test(.needsPostgres) func aReaderAppReadsAndMarksTheMirrorOnPostgreSQL() async throws {
        let server = try ReferenceServer(posts: 25)
        let scratch = try Scratch()
        let database = try await PostgresServer.makeDatabase()
        try await roundTrip(config: try scratch.writePostgresConfig(database, baseURL: server.baseURL, interval: "1h"), scratch: scratch)
    }

    @Test func badStreamInputIs400WithOneLine() async throws {
        let server = try ReferenceServer(posts: 3)
        let scratch = try Scratch()
        let (daemon, base) = try await ReaderListenerEndToEndTests.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }
        let login = try await ReaderListenerEndToEndTests.curl(["--data-urlencode", "Email=ada", "--data-urlencode",
                                                                "Passwd=correct horse battery", base + "/accounts/ClientLogin"])
        let auth = login.body.split(separator: "\n").first { $0.hasPrefix("Auth=") }.map { String($0.dropFirst(5)) } ?? ""
        let header = ["-H", "Authorization: GoogleLogin auth=\(auth)"]
        let api = base + "/reader/api/0/"
        let editToken = try await ReaderListenerEndToEndTests.curl(header + [api + "token"]).body
        for (path, says) in [
            ("stream/items/ids?s=feed/nowhere", "unknown stream"),
            ("stream/items/ids?s=user/-/label/Nobody", "unknown stream"),
            ("stream/items/ids?n=0", "is not a count"), ("stream/items/ids?n=10001", "is not a count"),
            ("stream/items/ids?n=abc", "is not a count"), ("stream/items/ids?ot=-5", "is not a time"),
            ("stream/items/ids?r=x", "is not an order"), ("stream/items/ids?xt=user/-/state/com.google/like", "is not served"),
            ("stream/items/ids?c=c1zz", "not a continuation"), ("stream/items/ids?c=abc", "not a continuation"),
            ("stream/items/ids?c=c1" + "31300a6e6f77686572650a70", "not a continuation"),
            ("stream/contents/feed%2Fnowhere", "unknown stream"), ("stream/items/contents?i=tag:google.com,2005:reader/item/xyz", "is not an item id"),
            ("stream/items/contents", "give 1 to 1000"), ("stream/items/ids?s=%FF", "percent-encoded"),
        ] {
            let answer = try await ReaderListenerEndToEndTests.curl(header + [api + path])
            #expect(answer.status == 400 && answer.body.contains(says) && answer.body.split(separator: "\n").count == 1,
                    "\(path): \(answer.status) \(answer.body)")
        }
        let unknown = try await ReaderListenerEndToEndTests.curl(header + ["-d", "T=\(editToken)&i=12345&a=user/-/state/com.google/read", api + "edit-tag"])
        #expect(unknown.status == 400 && unknown.body.contains("nothing changed"), "\(unknown.body)")
        let noToken = try await ReaderListenerEndToEndTests.curl(header + ["-d", "i=12345&a=user/-/state/com.google/read", api + "edit-tag"])
        #expect(noToken.status == 401, "a write needs the T token")
        let badTag = try await ReaderListenerEndToEndTests.curl(header + ["-d", "T=\(editToken)&i=1&a=user/-/state/com.google/like", api + "edit-tag"])
        #expect(badTag.status == 400 && badTag.body.contains("not served"))
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM post_state") == "0", "no bad request changed a mark")
    }
}
