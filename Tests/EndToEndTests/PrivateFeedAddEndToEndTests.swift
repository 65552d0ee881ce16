import Foundation
import Testing

/// `feedsync add URL` with a private feed's credentials: where the secret is goes into the
/// config, never the secret; discovery sends them only to the address's origin.
@Suite(.endToEnd) struct PrivateFeedAddEndToEndTests {
    let base = PrivateFeedEndToEndTests()

    func emptyConfig(_ scratch: Scratch) throws -> String {
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(#"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": []}"#.utf8).write(to: url)
        let secret = scratch.folder.appendingPathComponent("password")
        try Data((PrivateFeedEndToEndTests.password + "\n").utf8).write(to: secret)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret.path)
        return url.path
    }

    @Test func basicAndBearerCredentialsAreWrittenAsWhereTheSecretIsAndThePullReadsTheFeeds() async throws {
        let server = try base.startServer()
        let scratch = try Scratch()
        let config = try emptyConfig(scratch)
        let environment = ["FEED_TOKEN": PrivateFeedEndToEndTests.token]
        let basic = try await feedsync(["add", "\(server.baseURL)/private/feeds/0.xml", "--name", "intranet", "--basic-user", "reader",
                                        "--password-file", "password", "--config", config], environment: environment)
        #expect(basic.status == 0, "\(basic.stderr)")
        // A page on the feed's own origin, found with the credentials.
        let bearer = try await feedsync(["add", "\(server.baseURL)/private/site/0/", "--name", "letters", "--bearer-env", "FEED_TOKEN",
                                         "--config", config], environment: environment)
        #expect(bearer.status == 0, "\(bearer.stderr)")
        let written = try String(contentsOfFile: config, encoding: .utf8)
        #expect(!written.contains(PrivateFeedEndToEndTests.password) && !written.contains(PrivateFeedEndToEndTests.token), "\(written)")
        let feeds = try #require((try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any])?["feeds"] as? [[String: Any]])
        let auths = feeds.map { ($0["posts"] as? [String: Any])?["auth"] as? [String: Any] ?? [:] }
        #expect((auths[0]["basic"] as? [String: String]) == ["user": "reader", "passwordFile": "password"], "\(written)")
        #expect((auths[1] as? [String: String]) == ["bearerEnv": "FEED_TOKEN"], "\(written)")
        #expect((feeds[1]["posts"] as? [String: Any])?["url"] as? String == "\(server.baseURL)/private/atom/0.xml", "the page's feed")

        let pulled = try await feedsync(["pull", "--config", config], environment: environment)
        #expect(pulled.status == 0 && pulled.stdout.contains("intranet: 3 new") && pulled.stdout.contains("letters: 3 new"), "\(pulled.stdout)\(pulled.stderr)")
        let output = [("add", basic.stdout + basic.stderr + bearer.stdout + bearer.stderr), ("pull", pulled.stdout + pulled.stderr)]
        #expect(SecretSearch.findings(of: [PrivateFeedEndToEndTests.password, PrivateFeedEndToEndTests.token], in: output).isEmpty)
    }

    @Test func aRedirectToAnotherOriginGetsNoCredentialsAndNothingIsAdded() async throws {
        let server = try base.startServer()
        let scratch = try Scratch()
        let config = try emptyConfig(scratch)
        let before = try String(contentsOfFile: config, encoding: .utf8)
        let added = try await feedsync(["add", "\(server.baseURL)/away/302/private/feeds/2.xml", "--bearer-env", "FEED_TOKEN", "--config", config],
                                       environment: ["FEED_TOKEN": PrivateFeedEndToEndTests.token])
        #expect(added.status != 0 && added.stderr.contains("401"), "\(added.stderr)")
        let away = try await base.seen(server).filter { $0["port"] as? Int != server.port }
        #expect(away.count == 1 && away.allSatisfy { $0["authorization"] is NSNull }, "\(away)")
        #expect(try String(contentsOfFile: config, encoding: .utf8) == before)
    }

    @Test(arguments: [
        (["--password-file", "password"], "need --basic-user"),
        (["--basic-user", "reader"], "needs --password-env VAR or --password-file PATH"),
        (["--basic-user", "reader", "--password-env", "P", "--bearer-file", "password"], "not both"),
        (["--bearer-env", "A", "--bearer-file", "password"], "give --bearer-env or --bearer-file, not both"),
    ])
    func optionsThatDoNotMakeOneAuthAreAUsageError(_ options: [String], _ reason: String) async throws {
        let scratch = try Scratch()
        let config = try emptyConfig(scratch)
        let added = try await feedsync(["add", "https://intranet.example/feed.xml", "--config", config] + options)
        #expect(added.status == 64 && added.stderr.contains(reason), "\(added.stderr)")
    }

    @Test func credentialsAreNotTakenForAnOPMLFileOrForPlainHTTPToAnotherHost() async throws {
        let scratch = try Scratch()
        let config = try emptyConfig(scratch)
        let opml = scratch.folder.appendingPathComponent("list.opml")
        try Data(#"<opml version="2.0"><body><outline xmlUrl="https://a.example/feed"/></body></opml>"#.utf8).write(to: opml)
        let fromFile = try await feedsync(["add", opml.path, "--bearer-file", "password", "--config", config])
        #expect(fromFile.status == 64 && fromFile.stderr.contains("--bearer-file applies to a web feed"), "\(fromFile.stderr)")
        let plain = try await feedsync(["add", "http://intranet.example/feed.xml", "--bearer-file", "password", "--config", config])
        #expect(plain.status == 78 && plain.stderr.contains("credentials are sent only over https"), "\(plain.stderr)")
    }
}
