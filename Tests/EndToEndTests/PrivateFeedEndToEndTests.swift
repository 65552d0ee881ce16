import Foundation
import Testing

/// Private web feeds (`"auth"`) and per-feed `"userAgent"` and `"headers"`, against the local
/// feed server (Fixtures/webfeed/server.py), which checks Basic and Bearer credentials and
/// redirects to a second port: another origin.
@Suite(.endToEnd) struct PrivateFeedEndToEndTests {
    static let password = "pw-7Hq2xZ9mLk4vB8nR"
    static let token = "tok-Wc3Yp6Fj1Ds5Ga0Ue"

    func startServer() throws -> ReferenceServer {
        try ReferenceServer(script: "Fixtures/webfeed/server.py",
                            arguments: ["--feeds", "4", "--items", "3", "--extra-ports", "1",
                                        "--basic", "reader:\(Self.password)", "--bearer", Self.token])
    }

    /// A config of web feeds `name: (path, more posts keys)`, with the password in a 0600 file.
    func writeConfig(_ scratch: Scratch, _ server: ReferenceServer, _ feeds: [(String, String, String)]) throws -> String {
        let secret = scratch.folder.appendingPathComponent("password")
        try Data((Self.password + "\n").utf8).write(to: secret)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret.path)
        let entries = feeds.map { name, path, more in
            #"{"name": "\#(name)", "interval": "1h", "posts": {"integration": "webfeed", "url": "\#(server.baseURL)\#(path)"\#(more)}}"#
        }
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [\#(entries.joined(separator: ", "))]}"#
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    static let basic = #", "auth": {"basic": {"user": "reader", "passwordFile": "password"}}"#
    static let bearer = #", "auth": {"bearerEnv": "FEED_TOKEN"}"#

    /// What the server saw: each request's port, path, Authorization, User-Agent and X-Team.
    func seen(_ server: ReferenceServer) async throws -> [[String: Any]] {
        try await server.control("GET", "/_control/seen")["requests"] as? [[String: Any]] ?? []
    }

    @Test func basicAndBearerFeedsAreReadAndTheirCredentialsStayOffTheOutputAndTheStore() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server, [
            ("basic", "/private/feeds/0.xml", Self.basic),
            ("bearer", "/private/atom/1.xml", Self.bearer + #", "userAgent": "Intranet Reader/2.0", "headers": {"X-Team": "news"}"#),
            // Discovery: the page names ../../atom/0.xml, on the same origin, which gets the credentials too.
            ("site", "/private/site/0/", Self.basic),
        ])
        // OPML: the entry's posts section (its auth included) is each of its feeds' own.
        let opml = #"<opml version="2.0"><body><outline title="Two" xmlUrl="\#(server.baseURL)/private/feeds/2.xml"/>"#
            + #"<outline title="Three" xmlUrl="\#(server.baseURL)/private/feeds/3.xml"/></body></opml>"#
        try Data(opml.utf8).write(to: scratch.folder.appendingPathComponent("private.opml"))
        var json = try String(contentsOfFile: config, encoding: .utf8)
        json = json.replacingOccurrences(of: "}}]}", with: #"}}, {"name": "team", "opml": "private.opml", "interval": "1h", "posts": {"auth": {"bearerEnv": "FEED_TOKEN"}}}]}"#)
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        let pulled = try await feedsync(["pull", "--config", config], environment: ["FEED_TOKEN": Self.token])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(pulled.stdout.contains("basic: 3 new"), "\(pulled.stdout)")
        #expect(pulled.stdout.contains("bearer: 3 new"), "\(pulled.stdout)")
        #expect(pulled.stdout.contains("site: 3 new"), "\(pulled.stdout)")
        #expect(pulled.stdout.contains("team.two: 3 new") && pulled.stdout.contains("team.three: 3 new"), "\(pulled.stdout)")
        let requests = try await seen(server)
        let bearerRequests = requests.filter { $0["path"] as? String == "/private/atom/1.xml" }
        #expect(bearerRequests.count == 1)
        #expect(bearerRequests.first?["user-agent"] as? String == "Intranet Reader/2.0")
        #expect(bearerRequests.first?["x-team"] as? String == "news")
        #expect(requests.filter { $0["path"] as? String == "/private/feeds/0.xml" }.first?["user-agent"] as? String != "Intranet Reader/2.0",
                "a feed's user agent is its own")

        let status = try await feedsync(["status", "--config", config], environment: ["FEED_TOKEN": Self.token])
        let stored = SecretSearch.printableRuns(of: databaseBytes(scratch))
        let findings = SecretSearch.findings(of: [Self.password, Self.token],
                                             in: [("pull stdout", pulled.stdout), ("pull stderr", pulled.stderr),
                                                  ("status", status.stdout + status.stderr), ("the store", stored)])
        #expect(findings.isEmpty, "\(findings)")
    }

    @Test(arguments: [(basic, "Basic "), (bearer, "Bearer ")])
    func credentialsAndHeadersAreNotSentAcrossARedirectToAnotherOrigin(_ auth: String, _ scheme: String) async throws {
        let server = try startServer()
        let scratch = try Scratch()
        // The first port redirects to the second, whose /private/ answers 401 without credentials.
        let config = try writeConfig(scratch, server, [
            ("moved", "/away/302/private/feeds/2.xml", auth + #", "userAgent": "Intranet Reader/2.0", "headers": {"X-Team": "news"}"#),
        ])
        let pulled = try await feedsync(["pull", "--config", config], environment: ["FEED_TOKEN": Self.token])
        #expect(pulled.status == 77, "\(pulled.stdout)\(pulled.stderr)")
        let requests = try await seen(server)
        let home = requests.filter { $0["port"] as? Int == server.port }
        let away = requests.filter { $0["port"] as? Int != server.port }
        let sent = home.first?["authorization"] as? String
        #expect(home.count == 1 && sent?.hasPrefix(scheme) == true && (scheme == "Basic " || sent == "Bearer \(Self.token)"), "\(home)")
        #expect(home.first?["x-team"] as? String == "news")
        #expect(away.count == 1, "one request, no retry storm: \(away)")
        #expect(away.allSatisfy { $0["authorization"] is NSNull && $0["x-team"] is NSNull }, "\(away)")
        #expect(away.first?["user-agent"] as? String == "Intranet Reader/2.0", "the user agent goes everywhere")
        let lines = pulled.stderr.split(separator: "\n").filter { $0.contains("401") }
        #expect(lines.count == 1, "\(pulled.stderr)")
        #expect(lines.first?.contains("moved") == true && lines.first?.contains("another origin than the feed's") == true, "\(pulled.stderr)")
        #expect(SecretSearch.findings(of: [Self.token], in: [("stderr", pulled.stderr), ("stdout", pulled.stdout)]).isEmpty)
    }

    @Test func refusedCredentialsAreOneLineNamingTheFeedAndOneRequest() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server, [("wrong", "/private/feeds/3.xml", Self.bearer)])
        let pulled = try await feedsync(["pull", "--config", config], environment: ["FEED_TOKEN": "tok-not-the-right-one-42"])
        #expect(pulled.status == 77, "\(pulled.stdout)\(pulled.stderr)")
        #expect(try await seen(server).filter { $0["path"] as? String == "/private/feeds/3.xml" }.count == 1, "no retry storm")
        let lines = pulled.stderr.split(separator: "\n").filter { $0.contains("401") }
        #expect(lines.count == 1 && lines.first?.contains("wrong") == true
                && lines.first?.contains("refused the credentials of \"auth\"") == true, "\(pulled.stderr)")

        let anonymous = try writeConfig(scratch, server, [("plain", "/private/feeds/3.xml", "")])
        let refused = try await feedsync(["pull", "--config", anonymous])
        #expect(refused.stderr.contains("the feed is private; give its credentials with \"auth\""), "\(refused.stderr)")
    }

    @Test(arguments: [
        (#", "headers": {"Authorization": "Bearer x"}"#, "feeds[0].posts.headers.Authorization", "give them with \"auth\""),
        (#", "headers": {"cookie": "a=b"}"#, "feeds[0].posts.headers.cookie", "give them with \"auth\""),
        (#", "headers": {"X-Team": "a\u000Db"}"#, "feeds[0].posts.headers.X-Team", "without control characters"),
        (#", "headers": {"Bad Name": "x"}"#, "feeds[0].posts.headers.Bad Name", "is not a header name"),
        (#", "userAgent": "a\u000Ab""#, "feeds[0].posts.userAgent", "without control characters"),
        (#", "auth": {"basic": {"user": "a:b", "passwordEnv": "P"}}"#, "feeds[0].posts.auth.basic.user", "no colon"),
        (#", "auth": {"basic": {"user": "a", "password": "inline"}}"#, "feeds[0].posts.auth.basic.password", "not read from the config"),
        (#", "auth": {"bearerFile": "password", "basic": {"user": "a", "passwordEnv": "P"}}"#, "feeds[0].posts.auth", "not both"),
    ])
    func badHeadersAndAuthAreRefusedWithTheirKeyPath(_ keys: String, _ path: String, _ reason: String) async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server, [("private", "/private/feeds/0.xml", keys)])
        let check = try await feedsync(["config", "check", "--config", config], environment: ["P": "secret-value-long"])
        #expect(check.status == 78, "\(check.stdout)\(check.stderr)")
        #expect(check.stderr.contains(path + ":") && check.stderr.contains(reason), "\(check.stderr)")
    }

    @Test func credentialsAreRefusedForPlainHTTPToAnotherHost() async throws {
        let scratch = try Scratch()
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [{"name": "p", "posts": {"integration": "webfeed", "#
            + #""url": "http://intranet.example/feed.xml", "auth": {"bearerEnv": "FEED_TOKEN"}}}]}"#
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: config)
        let check = try await feedsync(["config", "check", "--config", config.path], environment: ["FEED_TOKEN": Self.token])
        #expect(check.status == 78)
        #expect(check.stderr.contains("feeds[0].posts.auth:") && check.stderr.contains("credentials are sent only over https"), "\(check.stderr)")
    }
}
