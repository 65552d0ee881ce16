@testable import App
import Core
import Foundation
import Testing

/// Where a sign-in's secret goes, decided from the config alone: a second login refreshes the
/// account's login in place; anything the config names for something else is refused.
@Suite struct LoginTargetTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-target-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func editor(_ feeds: [String]) throws -> ConfigEditor {
        let url = folder.appendingPathComponent("feedsync.json")
        try Data(#"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [\#(feeds.joined(separator: ", "))]}"#.utf8).write(to: url)
        return try ConfigEditor(configPath: url.path, environment: [:])
    }

    static let web = #"{"name": "ada-example", "posts": {"integration": "webfeed", "url": "https://example.org/feed"}}"#
    static func login(_ name: String, file: String, server: String = "https://example.social", timeline: String = "home") -> String {
        #"{"name": "\#(name)", "posts": {"integration": "mastodon", "server": "\#(server)", "accessTokenFile": "\#(file)", "timeline": "\#(timeline)"}}"#
    }

    /// A Mastodon-like request for account `ada` on example.social: a feed is hers when its
    /// server matches and its file is one of `hers` (`nil` for the files in `unknown`).
    func request(name: String? = nil, file: String? = nil, addsFeed: Bool = true, hers: Set<String> = [], unknown: Set<String> = []) -> LoginTarget.Request {
        LoginTarget.Request(
            integration: "mastodon", secretKey: "accessTokenFile", account: "@ada@example.social", name: name, defaultName: "ada-example",
            secretFile: file.map { folder.appendingPathComponent($0) }, defaultSecretFile: { folder.appendingPathComponent("\($0).token") },
            addsFeed: addsFeed
        ) { posts, url in
            guard case .string("https://example.social")? = posts["server"] else { return false }
            if unknown.contains(url.lastPathComponent) { return nil }
            return hers.contains(url.lastPathComponent)
        }
    }

    func decide(_ feeds: [String], _ request: LoginTarget.Request) throws -> LoginTarget {
        try LoginTarget.decide(request, in: try editor(feeds), usage: "u")
    }

    @Test func aFirstLoginIsANewFeedWithItsOwnFile() throws {
        let target = try decide([Self.login("other", file: "other.token")], request())
        #expect(target.name == "ada-example" && !target.isRefresh && target.addsFeed)
        #expect(target.secretFile == folder.appendingPathComponent("ada-example.token").standardizedFileURL)
    }

    @Test func aSecondLoginRefreshesTheAccountsLoginAndEveryFeedThatReadsWithIt() throws {
        let feeds = [Self.login("mine", file: "mine.token"), Self.login("gargron", file: "mine.token", timeline: "account:@gargron"),
                     Self.login("other", file: "other.token")]
        for request in [request(hers: ["mine.token"]), request(name: "mine", hers: ["mine.token"]), request(addsFeed: false, hers: ["mine.token"]),
                        request(name: "mine", unknown: ["mine.token"]), request(file: "mine.token", hers: ["mine.token"])] {
            let target = try decide(feeds, request)
            #expect(target.name == "mine" && target.refreshed == ["mine", "gargron"] && !target.addsFeed)
            #expect(target.secretFile.lastPathComponent == "mine.token")
        }
    }

    @Test func aLoginFromBeforeAccountsWereRecordedIsRefreshedByItsDefaultName() throws {
        let target = try decide([Self.login("ada-example", file: "ada-example.token")], request(unknown: ["ada-example.token"]))
        #expect(target.isRefresh && target.name == "ada-example")
    }

    @Test func aNewNameIsANewLoginEvenForAnAccountThatHasOne() throws {
        let target = try decide([Self.login("mine", file: "mine.token")], request(name: "second", hers: ["mine.token"]))
        #expect(target.name == "second" && !target.isRefresh && target.secretFile.lastPathComponent == "second.token")
    }

    @Test(arguments: [
        ([web], LoginTargetTests.requestCase(), "already has a feed named \"ada-example\" that is not a login of @ada@example.social"),
        ([web], requestCase(name: "ada-example"), "already has a feed named \"ada-example\""),
        ([login("ada-example", file: "x.token", server: "https://other.social")], requestCase(), "not a login of"),
        ([login("theirs", file: "theirs.token")], requestCase(name: "theirs"), "not a login of"),
        ([login("a", file: "a.token"), login("b", file: "b.token")], requestCase(hers: ["a.token", "b.token"]), "has 2 logins"),
        ([login("mine", file: "mine.token")], requestCase(file: "elsewhere.token", hers: ["mine.token"]), "leave out --token-file"),
        ([login("theirs", file: "theirs.token")], requestCase(name: "new", file: "theirs.token"), "is the file feeds[0].posts.accessTokenFile names"),
        ([login("x", file: "x.token")], requestCase(name: "new", file: "feedsync.sqlite"), "is the file store.path names"),
        ([login("x", file: "x.token")], requestCase(name: "new", file: "feedsync.json"), "is the config itself"),
    ] as [([String], RequestCase, String)])
    func whatTheConfigHasForSomethingElseIsRefused(_ feeds: [String], _ given: RequestCase, _ words: String) throws {
        let made = request(name: given.name, file: given.file, hers: given.hers)
        do {
            let target = try decide(feeds, made)
            Issue.record("decided \(target.name) at \(target.secretFile.path)")
        } catch let error as UsageError {
            #expect(error.message.contains(words), "\(error.message)")
        }
    }

    @Test func aFileThereThatIsNoLoginsSecretIsNotReplaced() throws {
        try Data("line one\nline two\n".utf8).write(to: folder.appendingPathComponent("ada-example.token"))
        chmod(folder.appendingPathComponent("ada-example.token").path, 0o600)
        #expect(throws: UsageError.self) { try decide([Self.login("x", file: "x.token")], request()) }
        try Data("an earlier token\n".utf8).write(to: folder.appendingPathComponent("ada-example.token"))
        #expect(try decide([Self.login("x", file: "x.token")], request()).name == "ada-example")
    }

    @Test func feedsThatReadWithAFileAreFound() throws {
        let editor = try editor([Self.login("a", file: "shared.token"), Self.login("b", file: "./shared.token"), Self.login("c", file: "c.token")])
        #expect(LoginTarget.feeds(naming: folder.appendingPathComponent("shared.token"), in: editor) == ["a", "b"])
        #expect(LoginTarget.feeds(naming: folder.appendingPathComponent("none.token"), in: editor).isEmpty)
    }

    /// A request's varying parts, as test arguments.
    struct RequestCase: Sendable {
        var name: String?
        var file: String?
        var hers: Set<String>
    }

    static func requestCase(name: String? = nil, file: String? = nil, hers: Set<String> = []) -> RequestCase {
        RequestCase(name: name, file: file, hers: hers)
    }
}
