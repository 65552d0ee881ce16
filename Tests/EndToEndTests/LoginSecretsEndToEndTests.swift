import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A login writes its secrets only when everything else is decided: a second login to an
/// account refreshes its secret in place (and revokes the old Mastodon token), and a login that
/// fails at any step leaves the config and every file byte for byte as they were, no new file,
/// and no token valid at the server that nothing holds.
@Suite(.endToEnd) struct LoginSecretsEndToEndTests {
    func config(_ scratch: Scratch) -> URL { scratch.folder.appendingPathComponent("feedsync.json") }

    /// A first login, by pasted code; `extra` as `login` takes it.
    func firstLogin(_ server: ReferenceServer, _ scratch: Scratch, _ extra: [String] = []) async throws {
        let login = try await pasteLogin(server, in: scratch.folder, extra)
        try #require(login.process.terminationStatus == 0, "\(login.stdout)\(login.stderr)")
    }

    // MARK: A second login

    @Test(arguments: [([], [], "ada-127.0.0.1"), (["--name", "me"], [], "me"), (["--name", "me"], ["--name", "me"], "me"),
                      ([], ["legacy"], "ada-127.0.0.1"), ([], ["--no-feed"], "ada-127.0.0.1")])
    func aSecondMastodonLoginReplacesTheTokenInPlaceAndRevokesTheOldOne(_ first: [String], _ second: [String], _ feed: String) async throws {
        let server = try await mastodonFixture()
        let scratch = try Scratch()
        try await firstLogin(server, scratch, first)
        let tokenFile = scratch.folder.appendingPathComponent("\(feed).token")
        let appFile = scratch.folder.appendingPathComponent("\(feed).token.app")
        let old = try String(contentsOf: tokenFile, encoding: .utf8)
        let oldApp = try String(contentsOf: appFile, encoding: .utf8)
        #expect(oldApp.contains(#""account": "ada""#), "\(oldApp)")
        var options = second
        if options == ["legacy"] {
            // An app file from before logins recorded their account.
            options = []
            try Data(oldApp.replacingOccurrences(of: #", "account": "ada""#, with: "").utf8).write(to: appFile)
        }
        // A feed added through the login reads with the same token file.
        let added = try await feedsync(["add", "@grace@127.0.0.1:\(server.port)", "--config", config(scratch).path])
        #expect(added.status == 0, "\(added.stderr)")
        let configBefore = try Data(contentsOf: config(scratch))

        let login = try await pasteLogin(server, in: scratch.folder, options)
        #expect(login.process.terminationStatus == 0, "\(login.stdout)\(login.stderr)")
        #expect(login.stdout.contains("token replaced in \(tokenFile.path)") && login.stdout.contains("grace-127.0.0.1"), "\(login.stdout)")
        #expect(login.stdout.contains("revoked the replaced token"), "\(login.stdout)")
        #expect(try Data(contentsOf: config(scratch)) == configBefore, "the config is not touched")
        let new = try String(contentsOf: tokenFile, encoding: .utf8)
        #expect(new != old)
        let ledger = try await server.oauthLedger()
        #expect(ledger.revoked == [old.trimmingCharacters(in: .newlines)], "the old token is revoked")
        #expect(ledger.valid == [new.trimmingCharacters(in: .newlines)], "only the new one is valid")
        #expect(try String(contentsOf: appFile, encoding: .utf8) != oldApp, "the new app's id and secret, to revoke the new token later")
        var info = stat()
        #expect(lstat(tokenFile.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let files = snapshot(scratch.folder).keys.filter { $0.hasSuffix(".token") || $0.hasSuffix(".app") || $0.hasPrefix(".") }
        #expect(Set(files) == [tokenFile.lastPathComponent, appFile.lastPathComponent], "one login's files, nothing else: \(files)")

        let pull = try await feedsync(["pull", "--config", config(scratch).path])
        #expect(pull.status == 0, "the feeds read with the new token: \(pull.stderr)")
    }

    @Test func aSecondBlueskyLoginReplacesTheAppPasswordInPlace() async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/server.py", arguments: ["--posts", "5", "--password", "abcd-efgh-ijkl-mnop"])
        let scratch = try Scratch()
        let first = try InteractiveProcess(["login", "bluesky", "me.test", "--service", server.baseURL], in: scratch.folder)
        first.type("abcd-efgh-ijkl-mnop\n")
        try #require(try await first.status() == 0, "\(first.stderr)")
        let file = scratch.folder.appendingPathComponent("me.test.app-password")
        // As if the account's app password had been changed since.
        try Data("wxyz-wxyz-wxyz-wxyz\n".utf8).write(to: file)
        let configBefore = try Data(contentsOf: config(scratch))

        let second = try InteractiveProcess(["login", "bluesky", "@me.test", "--service", server.baseURL], in: scratch.folder)
        second.type("abcd-efgh-ijkl-mnop\n")
        #expect(try await second.status() == 0, "\(second.stdout)\(second.stderr)")
        #expect(second.stdout.contains("app password replaced in \(file.path)") && second.stdout.contains("stays valid until you revoke it"), "\(second.stdout)")
        #expect(try String(contentsOf: file, encoding: .utf8) == "abcd-efgh-ijkl-mnop\n")
        #expect(try Data(contentsOf: config(scratch)) == configBefore)
        #expect(!snapshot(scratch.folder).keys.contains { $0.hasPrefix(".") }, "no temporary file")
        let pull = try await feedsync(["pull", "--config", config(scratch).path])
        #expect(pull.status == 0, "\(pull.stderr)")
    }

    // MARK: Failure at each step

    /// What each case sets up in the scratch folder before the login, the login's options, the
    /// exit status and the words of its one sentence, and whether the sign-in happens at all.
    struct Failure: Sendable, CustomStringConvertible {
        var description: String
        var options: [String] = []
        var status: Int32
        var words: String
        var signsIn = true
    }

    static let mastodonFailures: [Failure] = [
        Failure(description: "a symlink at the token path", status: 65, words: "is a symlink"),
        Failure(description: "a symlink at the app path", status: 65, words: "is a symlink"),
        Failure(description: "a folder at the app path", status: 65, words: "is not a regular file"),
        Failure(description: "a feed of that name", status: 64, words: "already has a feed named \"ada-127.0.0.1\""),
        Failure(description: "a file there that is no secret", status: 64, words: "does not hold a login's secret"),
        Failure(description: "a config that is a symlink", status: 78, words: "is not a regular file"),
        Failure(description: "a config changed during the sign-in", status: 75, words: "changed while this command ran"),
        Failure(description: "no such folder", options: ["--token-file", "missing/x.token"], status: 66, words: "is not a folder", signsIn: false),
        Failure(description: "a file for a folder", options: ["--token-file", "plain/x.token"], status: 66, words: "is not a folder", signsIn: false),
        Failure(description: "a name taken", options: ["--name", "blog"], status: 64, words: "already has a feed named \"blog\"", signsIn: false),
    ]

    @Test(arguments: mastodonFailures)
    func aMastodonLoginThatFailsChangesNoFileAndLeavesNoTokenValid(_ failure: Failure) async throws {
        let server = try await mastodonFixture()
        let scratch = try Scratch()
        let folder = scratch.folder
        let elsewhere = folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false)
        try Data("someone's\n".utf8).write(to: elsewhere.appendingPathComponent("file"))
        try Data("a file\n".utf8).write(to: folder.appendingPathComponent("plain"))
        var feeds = #"{"name": "blog", "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/feed"}}"#
        switch failure.description {
        case "a symlink at the token path": symlink(elsewhere.appendingPathComponent("file").path, folder.appendingPathComponent("ada-127.0.0.1.token").path)
        case "a symlink at the app path": symlink(elsewhere.appendingPathComponent("file").path, folder.appendingPathComponent("ada-127.0.0.1.token.app").path)
        case "a folder at the app path": try FileManager.default.createDirectory(at: folder.appendingPathComponent("ada-127.0.0.1.token.app"), withIntermediateDirectories: false)
        case "a feed of that name": feeds += #", {"name": "ada-127.0.0.1", "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/other"}}"#
        case "a file there that is no secret":
            try Data("two\nlines\n".utf8).write(to: folder.appendingPathComponent("ada-127.0.0.1.token"))
            chmod(folder.appendingPathComponent("ada-127.0.0.1.token").path, 0o600)
        default: break
        }
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [\#(feeds)]}"# + "\n"
        if failure.description == "a config that is a symlink" {
            try Data(json.utf8).write(to: elsewhere.appendingPathComponent("feedsync.json"))
            symlink("elsewhere/feedsync.json", config(scratch).path)
        } else {
            try Data(json.utf8).write(to: config(scratch))
        }
        var before = snapshot(folder)
        let login = try await pasteLogin(server, in: folder, failure.options) {
            guard failure.description == "a config changed during the sign-in" else { return }
            try Data((json + " ").utf8).write(to: config(scratch))
            before = snapshot(folder)
        }
        #expect(login.process.terminationStatus == failure.status, "\(login.stdout)\(login.stderr)")
        #expect(login.stderr.contains(failure.words), "\(login.stderr)")
        #expect(login.stderr.split(separator: "\n").count <= 3, "one sentence (and a usage line): \(login.stderr)")
        #expect(snapshot(folder) == before, "every file as it was, none new")
        let ledger = try await server.oauthLedger()
        #expect(ledger.valid.isEmpty, "the token the sign-in made is revoked: \(ledger)")
        #expect(ledger.revoked.count == (failure.signsIn ? 1 : 0) && ledger.apps == (failure.signsIn ? 1 : 0), "\(ledger)")
    }

    static let refreshFailures: [Failure] = [
        Failure(description: "the app file became a symlink", status: 65, words: "is a symlink"),
        Failure(description: "another token file", options: ["--token-file", "other.token"], status: 64, words: "leave out --token-file"),
        Failure(description: "the config changed during the sign-in", status: 75, words: "changed while this command ran"),
    ]

    @Test(arguments: refreshFailures)
    func aSecondMastodonLoginThatFailsKeepsTheFirstOnesTokenValidAndItsFiles(_ failure: Failure) async throws {
        let server = try await mastodonFixture()
        let scratch = try Scratch()
        try await firstLogin(server, scratch)
        let first = try await server.oauthLedger()
        let appFile = scratch.folder.appendingPathComponent("ada-127.0.0.1.token.app")
        if failure.description == "the app file became a symlink" {
            try FileManager.default.moveItem(at: appFile, to: scratch.folder.appendingPathComponent("kept.app"))
            symlink("kept.app", appFile.path)
        }
        var before = snapshot(scratch.folder)
        let login = try await pasteLogin(server, in: scratch.folder, failure.options) {
            guard failure.description == "the config changed during the sign-in" else { return }
            try Data((try String(contentsOf: config(scratch), encoding: .utf8) + " ").utf8).write(to: config(scratch))
            before = snapshot(scratch.folder)
        }
        #expect(login.process.terminationStatus == failure.status, "\(login.stdout)\(login.stderr)")
        #expect(login.stderr.contains(failure.words), "\(login.stderr)")
        #expect(snapshot(scratch.folder) == before)
        let ledger = try await server.oauthLedger()
        #expect(ledger.valid == first.valid, "the first login's token stays valid, the new one is revoked: \(ledger)")
        #expect(ledger.revoked.count == 1 && !first.valid.contains(ledger.revoked[0]))
    }

    static let blueskyFailures: [Failure] = [
        Failure(description: "a symlink at the password path", status: 65, words: "is a symlink", signsIn: false),
        Failure(description: "a name taken", options: ["--name", "blog"], status: 64, words: "already has a feed named \"blog\"", signsIn: false),
        Failure(description: "no such folder", options: ["--token-file", "missing/x"], status: 66, words: "is not a folder", signsIn: false),
        Failure(description: "a wrong password", status: 77, words: "Invalid identifier or password"),
        Failure(description: "a config that is a symlink", status: 78, words: "is not a regular file"),
    ]

    @Test(arguments: blueskyFailures)
    func aBlueskyLoginThatFailsChangesNoFile(_ failure: Failure) async throws {
        let server = try ReferenceServer(script: "Fixtures/bluesky/server.py", arguments: ["--posts", "5", "--password", "abcd-efgh-ijkl-mnop"])
        let scratch = try Scratch()
        let folder = scratch.folder
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("elsewhere"), withIntermediateDirectories: false)
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [{"name": "blog", "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/feed"}}]}"#
        if failure.description == "a config that is a symlink" {
            try Data(json.utf8).write(to: folder.appendingPathComponent("elsewhere/feedsync.json"))
            symlink("elsewhere/feedsync.json", config(scratch).path)
        } else {
            try Data(json.utf8).write(to: config(scratch))
        }
        if failure.description == "a symlink at the password path" { symlink("/etc/hostname", folder.appendingPathComponent("me.test.app-password").path) }
        let before = snapshot(folder)
        let login = try InteractiveProcess(["login", "bluesky", "me.test", "--service", server.baseURL] + failure.options, in: folder)
        // A login refused before it asks for the password reads nothing.
        if failure.signsIn { login.type(failure.description == "a wrong password" ? "wxyz-wxyz-wxyz-wxyz\n" : "abcd-efgh-ijkl-mnop\n") }
        #expect(try await login.status() == failure.status, "\(login.stdout)\(login.stderr)")
        #expect(login.stderr.contains(failure.words), "\(login.stderr)")
        #expect(snapshot(folder) == before)
        let stats = try await server.control("GET", "/_control/stats")
        #expect(stats["logins"] as? Int ?? 0 == (failure.signsIn ? 1 : 0), "checked with the service only when all else was decided: \(stats)")
    }

    // MARK: Logout

    @Test func aLogoutWhoseTokenOtherFeedsReadWithIsRefusedAndChangesNothing() async throws {
        let server = try await mastodonFixture()
        let scratch = try Scratch()
        try await firstLogin(server, scratch)
        let added = try await feedsync(["add", "@grace@127.0.0.1:\(server.port)", "--config", config(scratch).path])
        try #require(added.status == 0, "\(added.stderr)")
        let before = snapshot(scratch.folder)
        let logout = try await feedsync(["logout", "ada-127.0.0.1", "--config", config(scratch).path])
        #expect(logout.status == 64, "\(logout.stderr)")
        #expect(logout.stderr.contains(#"feed "grace-127.0.0.1-\#(server.port)" also read with"#), "\(logout.stderr)")
        #expect(snapshot(scratch.folder) == before)
        #expect(try await server.oauthLedger().revoked.isEmpty)

    }

    @Test(arguments: ["a symlink", "missing", "empty"])
    func aLogoutWhoseTokenFileIsNotAPlainFileSendsNothingAndChangesNothing(_ kind: String) async throws {
        let server = try await mastodonFixture()
        let scratch = try Scratch()
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "me", "posts": {"integration": "mastodon", "server": "\(server.baseURL)", "accessTokenFile": "me.token", "timeline": "home"}},
                       {"name": "blog", "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/feed"}}]}
            """
        try Data(json.utf8).write(to: config(scratch))
        let token = scratch.folder.appendingPathComponent("me.token")
        try Data("fixed-token\n".utf8).write(to: scratch.folder.appendingPathComponent("real.token"))
        switch kind {
        case "a symlink": symlink("real.token", token.path)
        case "empty": try Data().write(to: token)
        default: break
        }
        try Data(#"{"server": "\#(server.baseURL)", "client_id": "id", "client_secret": "secret"}"#.utf8).write(to: scratch.folder.appendingPathComponent("me.token.app"))
        let before = snapshot(scratch.folder)
        let logout = try await feedsync(["logout", "me", "--config", config(scratch).path])
        #expect(logout.status == 66, "\(logout.stderr)")
        #expect(logout.stderr.contains("missing, empty or not a regular file"), "\(logout.stderr)")
        #expect(snapshot(scratch.folder) == before)
        #expect(try await server.stats().byPath["POST /oauth/revoke"] == nil, "nothing was sent to revoke")
    }
}
