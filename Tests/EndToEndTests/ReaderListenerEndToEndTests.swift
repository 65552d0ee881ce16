import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The reader listener of a real `feedsyncd` over a real SQLite file, driven with curl the way
/// NetNewsWire's ReaderAPI account starts (ClientLogin, token, user-info, subscription/list,
/// tag/list), and its refusals: wrong password, missing or wrong token, a body over the limit.
@Suite(.endToEnd, .serialized) struct ReaderListenerEndToEndTests {
    /// curl with the status line and headers, the body after them.
    static func curl(_ arguments: [String]) async throws -> (status: Int, body: String) {
        let result = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-s", "-i", "--max-time", "60"] + arguments)
        let text = result.stdout
        let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }

    /// A synced store with the listener on a free loopback port and the account `ada`, served by
    /// `feedsyncd` or (with `binary: "feedsync"`) by `feedsync serve`.
    static func start(_ scratch: Scratch, server: ReferenceServer, binary: String = "feedsyncd") async throws -> (DaemonProcess, String) {
        let port = try MetricsEndToEndTests.freePort()
        let config = try scratch.writeConfig(baseURL: server.baseURL, interval: "1h", feedKeys: #""group": "Friends","#)
        var json = try String(contentsOfFile: config, encoding: .utf8)
        json = String(json.dropLast()) + #", "serve": {"listen": "127.0.0.1:\#(port)"}, "searches": {"bread": "bread OR sourdough"}}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        #expect(try await feedsync(["serve-user", "add", "ada", "--config", config], input: "correct horse battery\n").status == 0)
        let daemon = try DaemonProcess(config: config, in: scratch, arguments: binary == "feedsync" ? ["serve"] : [], binary: binary)
        let base = "http://127.0.0.1:\(port)"
        #expect(try await eventually { try await curl([base + "/reader/api/0/user-info"]).status == 401 }, "\(daemon.log)")
        return (daemon, base)
    }

    @Test func aReaderAppSignsInAndListsTheFeeds() async throws {
        let server = try ReferenceServer(posts: 5)
        let scratch = try Scratch()
        let (daemon, base) = try await Self.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }

        let login = try await Self.curl(["--data-urlencode", "Email=ada", "--data-urlencode", "Passwd=correct horse battery",
                                         base + "/accounts/ClientLogin"])
        #expect(login.status == 200, "\(login.body)")
        let auth = try #require(login.body.split(separator: "\n").first { $0.hasPrefix("Auth=") }.map { String($0.dropFirst(5)) })
        #expect(auth.count == 64)
        let header = ["-H", "Authorization: GoogleLogin auth=\(auth)"]

        let token = try await Self.curl(header + [base + "/reader/api/0/token"])
        #expect(token.status == 200 && token.body.count == 57, "\(token.body)")
        let info = try await Self.curl(header + [base + "/reader/api/0/user-info?output=json"])
        let user = try JSONSerialization.jsonObject(with: Data(info.body.utf8)) as? [String: Any]
        #expect(user?["userName"] as? String == "ada")
        let list = try await Self.curl(header + [base + "/reader/api/0/subscription/list?output=json"])
        let subscriptions = (try JSONSerialization.jsonObject(with: Data(list.body.utf8)) as? [String: Any])?["subscriptions"] as? [[String: Any]]
        #expect(subscriptions?.map { $0["id"] as? String } == ["feed/home"])
        let categories = subscriptions?.first?["categories"] as? [[String: Any]]
        #expect(categories?.map { $0["label"] as? String } == ["Friends"])
        let tags = try await Self.curl(header + [base + "/reader/api/0/tag/list?output=json"])
        let tagIDs = ((try JSONSerialization.jsonObject(with: Data(tags.body.utf8)) as? [String: Any])?["tags"] as? [[String: Any]])?
            .compactMap { $0["id"] as? String }
        #expect(tagIDs == ["user/-/state/com.google/starred", "user/-/label/Friends"])
        // The group's label is a stream of its feeds' posts, paged like any other.
        let labelled = try await Self.curl(header + [base + "/reader/api/0/stream/items/ids?s=user/-/label/Friends&n=3"])
        let refs = (try JSONSerialization.jsonObject(with: Data(labelled.body.utf8)) as? [String: Any])
        #expect((refs?["itemRefs"] as? [[String: Any]])?.count == 3 && refs?["continuation"] is String, "\(labelled.body)")
        let rest = try await Self.curl(header + [base + "/reader/api/0/stream/items/ids?s=user/-/label/Friends&n=3&c=\(refs?["continuation"] as? String ?? "")"])
        let more = (try JSONSerialization.jsonObject(with: Data(rest.body.utf8)) as? [String: Any])?["itemRefs"] as? [[String: Any]]
        #expect(more?.count == 2, "5 posts in all: \(rest.body)")
        #expect(try await sqlite(scratch.sessions, "SELECT COUNT(*) FROM serve_tokens WHERE name = 'ada'") == "1")
        #expect(!(try String(contentsOf: daemon.logFile, encoding: .utf8)).contains(auth), "no token in the log")

        // `serve-user remove` revokes the token at once, for this running daemon too.
        #expect(try await feedsync(["serve-user", "remove", "ada", "--config", scratch.folder.appendingPathComponent("feedsync.json").path]).status == 0)
        #expect(try await Self.curl(header + [base + "/reader/api/0/user-info"]).status == 401)
    }

    /// `feedsync serve` runs the listener alone, over the same store, until SIGTERM.
    @Test func feedsyncServeRunsTheListenerAloneUntilStopped() async throws {
        let server = try ReferenceServer(posts: 2)
        let scratch = try Scratch()
        let (serving, base) = try await Self.start(scratch, server: server, binary: "feedsync")
        defer { serving.signal(SIGKILL) }
        let login = try await Self.curl(["--data-urlencode", "Email=ada", "--data-urlencode", "Passwd=correct horse battery",
                                         base + "/accounts/ClientLogin"])
        #expect(login.status == 200 && login.body.contains("Auth="))
        serving.signal(SIGTERM)
        #expect(await serving.exits())
        #expect(serving.process.terminationStatus == 0)

        let config = scratch.folder.appendingPathComponent("feedsync.json").path
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        root["serve"] = nil
        try JSONSerialization.data(withJSONObject: root).write(to: URL(fileURLWithPath: config))
        let without = try await feedsync(["serve", "--config", config])
        #expect(without.status == 78 && without.stderr.contains("serve") && without.stderr.contains("is missing"), "\(without.stderr)")
    }

    @Test func badInputGetsItsStatusAndOneLine() async throws {
        let server = try ReferenceServer(posts: 1)
        let scratch = try Scratch()
        let (daemon, base) = try await Self.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }

        let wrong = try await Self.curl(["--data-urlencode", "Email=ada", "--data-urlencode", "Passwd=wrong password", base + "/accounts/ClientLogin"])
        #expect(wrong.status == 401 && wrong.body == "wrong name or password\n")
        let nobody = try await Self.curl(["--data-urlencode", "Email=nobody", "--data-urlencode", "Passwd=x", base + "/accounts/ClientLogin"])
        #expect(nobody.status == 401 && nobody.body == "wrong name or password\n", "an unknown name is answered as a wrong password")
        #expect(try await Self.curl(["-d", "Email=ada", base + "/accounts/ClientLogin"]).status == 400)
        #expect(try await Self.curl(["-d", "Email=%ZZ&Passwd=x", base + "/accounts/ClientLogin"]).status == 400)
        let badToken = try await Self.curl(["-H", "Authorization: GoogleLogin auth=" + String(repeating: "a", count: 64),
                                            base + "/reader/api/0/subscription/list"])
        #expect(badToken.status == 401 && badToken.body.split(separator: "\n").count == 1)
        #expect(try await Self.curl(["-H", "Authorization: Bearer x", base + "/reader/api/0/subscription/list"]).status == 401)
        let big = String(repeating: "x", count: 64 * 1024 + 1)
        let tooLarge = try await Self.curl(["-H", "Expect:", "--data-binary", big, base + "/accounts/ClientLogin"])
        #expect(tooLarge.status == 413 && tooLarge.body == "request body over 65536 bytes\n", "\(tooLarge.body.prefix(200))")
        #expect(try await Self.curl([base + "/elsewhere"]).status == 404)
        #expect(try await Self.curl(["-X", "DELETE", base + "/reader/api/0/token"]).status == 405)

        // A right password after failures is still let in (after the slow-down).
        let right = try await Self.curl(["--data-urlencode", "Email=ada", "--data-urlencode", "Passwd=correct horse battery",
                                         base + "/accounts/ClientLogin"])
        #expect(right.status == 200)
        let log = try String(contentsOf: daemon.logFile, encoding: .utf8)
        #expect(log.contains("reader_login_refused") && !log.contains("wrong password") && !log.contains("correct horse"), "\(log)")
    }

    @Test(arguments: [
        (#"{"-x": "bread"}"#, "searches.-x", "a search's name"),
        (#"{"bread": ""}"#, "searches.bread", "bread"),
        (#"{"bread": 5}"#, "searches.bread", "bread"),
    ])
    func configCheckRefusesABadSavedSearch(_ searches: String, _ key: String, _ says: String) async throws {
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")
        var json = try String(contentsOfFile: config, encoding: .utf8)
        json = String(json.dropLast()) + #", "searches": \#(searches)}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 78 && check.stderr.contains(key) && check.stderr.contains(says), "\(check.stderr)")
    }

    @Test(arguments: [
        (#"{"listen": "0.0.0.0:8765"}"#, "serve.listen", "is not a loopback address"),
        (#"{"listen": "127.0.0.1:8765", "tls": {"certificate": "c.pem", "key": "k.pem"}}"#, "serve.tls.certificate", "does not exist"),
        (#"{"listen": "127.0.0.1:8765", "tls": "cert.pem"}"#, "serve.tls", "object"),
        (#"{"listen": "127.0.0.1:8765", "bogus": 1}"#, "serve", "bogus"),
        (#"{}"#, "serve", "listen"),
    ])
    func configCheckRefusesAnUnsafeListener(_ serve: String, _ key: String, _ says: String) async throws {
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: "http://127.0.0.1:9")
        var json = try String(contentsOfFile: config, encoding: .utf8)
        json = String(json.dropLast()) + #", "serve": \#(serve)}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 78 && check.stderr.contains(key) && check.stderr.contains(says), "\(check.stderr)")
        let proxied = json.replacingOccurrences(of: #""0.0.0.0:8765"}"#, with: #""0.0.0.0:8765", "behindProxy": true}"#)
        if proxied != json {
            try Data(proxied.utf8).write(to: URL(fileURLWithPath: config))
            #expect(try await feedsync(["config", "check", "--config", config]).status == 0, "behind a proxy, any address")
        }
    }
}
