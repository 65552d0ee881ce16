@testable import App
import Core
import Foundation
import Testing

/// Config files on disk, read the way the executables read them.
@Suite struct ConfigTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func write(_ json: String) throws -> String {
        let url = folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    func load(_ json: String, environment: [String: String] = ["PW": "demo"]) throws -> Runtime {
        try Runtime.load(configPath: try write(json), environment: environment)
    }

    func error(_ json: String, environment: [String: String] = ["PW": "demo"]) -> String? {
        do { _ = try load(json, environment: environment); return nil } catch { return "\(error)" }
    }

    let catalog = repository.appendingPathComponent("Fixtures/videos/catalog.json").path

    func feed(_ posts: String = #"{"integration": "httpapi", "baseURL": "http://127.0.0.1:9", "username": "demo", "passwordEnv": "PW"}"#) -> String {
        #"{"feeds": [{"name": "home", "interval": "1m", "posts": \#(posts), "videos": {"integration": "mockvideohost", "catalog": "\#(catalog)"}}]}"#
    }

    @Test func aGoodConfigBuildsEveryIntegrationInOrderAndResolvesPathsAgainstItsFolder() throws {
        let runtime = try load(feed())
        #expect(runtime.feedNames == ["home"])
        #expect(runtime.provider.lifecycles.map(\.name) == [
            "sqlite store \(folder.appendingPathComponent("feedsync.sqlite").path)", "http api http://127.0.0.1:9",
            "mock video host \(catalog)",
        ])
        #expect(runtime.provider.feeds.first?.interval == 60)
    }

    @Test func badConfigsAreOneSentenceNamingTheKeyPath() throws {
        let cases: [(String, String)] = [
            ("{", "is not valid JSON"),
            ("[]", "expected a JSON object at the top, found an array"),
            ("{}", "feeds: is required"),
            (feed().replacingOccurrences(of: "\"httpapi\"", with: "\"gopher\""), #"feeds[0].posts.integration: unknown integration "gopher"; known here: "bluesky", "httpapi", "mastodon""#),
            (feed().replacingOccurrences(of: "\"1m\"", with: "\"-1m\""), #"feeds[0].interval: "-1m" must be longer than zero"#),
            (feed().replacingOccurrences(of: "\"username\"", with: "\"pageSize\": 0, \"username\""), "feeds[0].posts.pageSize: 0 is out of range (1 to 1000)"),
            (feed().replacingOccurrences(of: "\"interval\"", with: "\"intervall\""), #"feeds[0].intervall: unknown key; did you mean "interval"?"#),
            (feed().replacingOccurrences(of: "http://127.0.0.1:9", with: "htp://x"), #"feeds[0].posts.baseURL: "htp://x" is not an http(s) URL"#),
            (feed().replacingOccurrences(of: #""name": "home", "#, with: ""), "feeds[0].name: is required"),
            (feed().replacingOccurrences(of: #"{"feeds""#, with: #"{"store": {"integration": "sqlite", "path": 5}, "feeds""#),
             "store.path: expected a string, found 5"),
        ]
        for (json, expected) in cases {
            let message = error(json)
            #expect(message?.hasPrefix(folder.appendingPathComponent("feedsync.json").path + ": ") == true, "\(json)")
            #expect(message?.contains(expected) == true, "expected \(expected), got \(message ?? "no error")")
        }
    }

    @Test func aConfigMayListNoFeeds() throws {
        let runtime = try load(#"{"feeds": []}"#)
        #expect(runtime.feedNames.isEmpty && runtime.builtFeedNames.isEmpty)
        #expect(runtime.provider.lifecycles.map(\.name) == ["sqlite store \(folder.appendingPathComponent("feedsync.sqlite").path)"])
        #expect(Runtime.noSuchFeed("home", among: []) == #"has no feed named "home" (it lists none)"#)
    }

    @Test func theStoreIsSQLiteUnlessConfigSaysOtherwise() throws {
        let runtime = try load(feed().replacingOccurrences(of: #"{"feeds""#, with: #"{"store": {"path": "mine.sqlite"}, "feeds""#))
        #expect(runtime.provider.lifecycles.first?.name == "sqlite store \(folder.appendingPathComponent("mine.sqlite").path)")
    }

    @Test func aMissingSecretIsAConfigErrorNamingTheVariable() {
        #expect(error(feed(), environment: [:])?.contains("environment variable PW is not set or empty") == true)
    }

    @Test func aBadConfigCreatesNoDatabase() async throws {
        _ = error(feed().replacingOccurrences(of: "\"1m\"", with: "\"0s\""))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("feedsync.sqlite").path))
    }

    @Test func aMissingFileSaysSoAndHowToPointAtOne() {
        #expect(throws: ConfigError.self) { try Runtime.load(configPath: "/nonexistent/feedsync.json", environment: [:]) }
        #expect(Runtime.locateConfigError(environment: [:])?.contains("pass --config PATH") == true)
    }

    @Test func theExampleConfigIsValid() throws {
        let runtime = try Runtime.load(configPath: Self.repository.appendingPathComponent("config.example.json").path,
                                       environment: ["FEEDSYNC_PASSWORD": "demo"])
        #expect(!runtime.feedNames.isEmpty)
    }

    @Test func exitCodesFollowSysexits() {
        #expect(ExitStatus(for: ConfigError(file: "f", keyPath: "", message: "m")) == .config)
        #expect(ExitStatus(for: UsageError("m", usage: "u")) == .usage)
        #expect(ExitStatus(for: ServiceError(.unauthorized, "o", "r")) == .credentials)
        #expect(ExitStatus(for: ServiceError(.unavailable, "o", "r")) == .unavailable)
        #expect(ExitStatus(for: ServiceError(.storage, "o", "r")) == .software)
    }
}

extension Runtime {
    /// The error `locateConfig` gives with no flag, run from a folder with no feedsync.json.
    static func locateConfigError(environment: [String: String]) -> String? {
        let previous = FileManager.default.currentDirectoryPath
        defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
        _ = FileManager.default.changeCurrentDirectoryPath("/")
        do { _ = try locateConfig(nil, environment: environment); return nil } catch { return "\(error)" }
    }
}
