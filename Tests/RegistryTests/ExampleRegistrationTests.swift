import App
import Core
import ExampleIntegration
@testable import feedsync
import Foundation
import Testing

/// A posts backend with a sign-in and a form of `add`, registered by one line: `feedsync`'s own
/// commands, run in this process with that registry, sign in to it, add a feed of it, check
/// the config and pull it, with nothing in `Sources/` naming it.
@Suite struct ExampleRegistrationTests {
    /// The standard integrations and the example: the one line a new integration adds.
    static let registry = IntegrationRegistry(IntegrationRegistry.standard.descriptors + [ExampleIntegration.descriptor])

    @Test func aBackendWithASignInAndAnAddFormIsSignedInToAddedCheckedAndPulledThroughTheRegistry() async throws {
        let folder = try makeFolder()
        let config = folder.appendingPathComponent("feedsync.json").path

        // A sign-in that fails after planning its token file writes nothing.
        let refused = try await feedsync(["login", "example", "alice", "--refuse", "--config", config])
        #expect(refused.status == .credentials)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)

        let login = try await feedsync(["login", "example", "alice", "--config", config])
        #expect(login.status == .ok, "\(login.stdout)")
        let tokenFile = folder.appendingPathComponent("alice.token")
        #expect(login.stdout.contains("logged in as alice; token saved in \(tokenFile.path)"), "\(login.stdout)")
        #expect(login.stdout.contains("added feed alice (example account alice) to \(config)"), "\(login.stdout)")
        #expect(login.stdout.contains("with a SQLite store beside it"), "the registry's default store: \(login.stdout)")
        #expect(try String(contentsOf: tokenFile, encoding: .utf8) == "token-for-alice\n")
        #expect(try FileManager.default.attributesOfItem(atPath: tokenFile.path)[.posixPermissions] as? Int == 0o600)
        #expect(try posts(of: "alice", in: config) == ["integration": .string("example"), "account": .string("alice"), "tokenFile": .string("alice.token")])

        let added = try await feedsync(["add", "example:bob", "--posts", "2", "--config", config])
        #expect(added.status == .ok)
        #expect(added.stdout.contains("added feed bob (example account bob) to \(config)"), "\(added.stdout)")
        #expect(try posts(of: "bob", in: config)
                == ["integration": .string("example"), "account": .string("bob"), "tokenFile": .string("alice.token"), "posts": .number(2)])
        // The form's option is refused for another form, before anything is looked up.
        let before = try Data(contentsOf: URL(fileURLWithPath: config))
        #expect(try await feedsync(["add", "example.org", "--posts", "2", "--config", config]).status == .usage)
        #expect(try Data(contentsOf: URL(fileURLWithPath: config)) == before)

        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == .ok)
        #expect(check.stdout.contains("ok; 2 feeds (alice, bob)"), "\(check.stdout)")
        #expect(check.stdout.contains("  example account alice\n") && check.stdout.contains("  example account bob\n"), "\(check.stdout)")

        let pull = try await feedsync(["pull", "--json", "--config", config])
        #expect(pull.status == .ok, "\(pull.stdout)")
        let outcomes = try JSONDecoder().decode([PulledFeed].self, from: Data(pull.stdout.utf8))
        #expect(outcomes.map(\.feed) == ["alice", "bob"] && outcomes.map(\.new) == [3, 2], "\(pull.stdout)")
        let stored = try await feedsync(["posts", "--limit", "10", "--config", config])
        let ids = stored.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }.map { String($0.split(separator: " ")[0]) }
        #expect(Set(ids) == ["alice/alice-1", "alice/alice-2", "alice/alice-3", "bob/bob-1", "bob/bob-2"], "\(stored.stdout)")

        // A second account signs in and out; the first one's login, which bob reads with, is kept.
        #expect(try await feedsync(["login", "example", "carol", "--config", config]).status == .ok)
        let logout = try await feedsync(["logout", "carol", "--config", config])
        #expect(logout.status == .ok)
        #expect(logout.stdout.contains("removed feed carol from \(config); its posts stay in the store"), "\(logout.stdout)")
        #expect(logout.stdout.contains("deleted \(folder.appendingPathComponent("carol.token").path)"), "\(logout.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("carol.token").path))
        #expect(try await feedsync(["logout", "alice", "--config", config]).status == .usage)
        #expect(FileManager.default.fileExists(atPath: tokenFile.path))
    }

    @Test func theHelpOfLoginAndAddListsTheNewIntegration() async throws {
        let login = try await feedsync(["login", "--help"])
        #expect(login.stdout.hasPrefix("usage: feedsync login mastodon SERVER | login bluesky HANDLE | login example ACCOUNT [--name NAME]"), "\(login.stdout)")
        #expect(login.stdout.contains("Sign in to a Mastodon server, Bluesky or an example account and add your home timeline."))
        #expect(login.stdout.contains("--refuse") && login.stdout.contains("Example: play a server that refuses the sign-in"))
        let add = try await feedsync(["add", "--help"])
        #expect(add.stdout.hasPrefix("usage: feedsync add WHAT [--name NAME] [--interval I] [--timeline T] [--posts N] [--deadline D]"), "\(add.stdout)")
        #expect(add.stdout.contains("@user@server, a Bluesky handle, or example:ACCOUNT."), "\(add.stdout)")
        #expect(add.stdout.contains("Example: how many posts the account has (default 3)"))
        let bash = try await feedsync(["completion", "bash"])
        #expect(bash.stdout.contains(#""login") opts="--config --name --no-feed --token-file --paste --callback --service --refuse --help""#), "\(bash.stdout)")
    }

    @Test func aKeyTheTableDoesNotListIsRefusedWithTheNearestOne() throws {
        let folder = try makeFolder()
        let config = folder.appendingPathComponent("feedsync.json")
        try Data(#"{"feeds": [{"name": "a", "posts": {"integration": "example", "account": "a", "tokenEnv": "T", "post": 2}}]}"#.utf8).write(to: config)
        var options = Runtime.Options(feeds: .all, createStore: false)
        options.registry = Self.registry
        options.deferMissingSecrets = true
        do {
            _ = try Runtime.load(configPath: config.path, options)
            Issue.record("a key the table does not list was taken")
        } catch let error as ConfigError {
            #expect(error.keyPath == "feeds[0].posts.post" && error.message == #"unknown key; did you mean "posts"?"#, "\(error)")
        }
    }

    @Test func theStandardRegistryGivesTheHelpTextsTheCommandsHadWhenTheyNamedEachBackend() {
        #expect(LoginCommand.synopsis == "login mastodon SERVER | login bluesky HANDLE [--name NAME] [--no-feed] [--token-file PATH] [--config PATH]")
        #expect(LoginCommand.summary == "Sign in to a Mastodon server or Bluesky and add your home timeline.")
        let login = Dictionary(uniqueKeysWithValues: LoginCommand.options.map { ($0.name, $0.help) })
        #expect(login["--service"] == "Bluesky: the PDS to sign in to (default https://bsky.social)")
        #expect(login["--paste"] == "Mastodon: paste the code shown by the server instead of a loopback callback (the default without a display)")
        #expect(login["--callback"] == "Mastodon: take the code through a loopback callback (the default with a display)")
        #expect(AddCommand.synopsis == "add WHAT [--name NAME] [--interval I] [--timeline T] [--deadline D] [--per-host N] [--basic-user USER] "
                + "[--password-env VAR] [--password-file PATH] [--bearer-env VAR] [--bearer-file PATH] [--config PATH]")
        #expect(AddCommand.summary == "Add a feed: a site or feed URL, an OPML file, @user@server, or a Bluesky handle.")
        #expect(AddCommand.options.map(\.name) == ["--config", "--name", "--interval", "--timeline", "--deadline", "--per-host",
                                                "--basic-user", "--password-env", "--password-file", "--bearer-env", "--bearer-file"])
        let add = Dictionary(uniqueKeysWithValues: AddCommand.options.map { ($0.name, $0.help) })
        #expect(add["--timeline"] == "Mastodon or Bluesky: the timeline instead of the account's posts (home, …)")
        #expect(add["--deadline"] == "an OPML file: how long finding its sites' feeds may take in all (90s, 5m; default 2m)")
        #expect(add["--per-host"] == "an OPML file: the most requests to one host while its sites' feeds are found (default 20)")
        let scopes = Dictionary(uniqueKeysWithValues: AddCommand.formOptions.map { ($0.option.name, $0.appliesTo) })
        #expect(scopes == ["--timeline": "Mastodon and Bluesky accounts", "--deadline": "an OPML file's sites", "--per-host": "an OPML file's sites",
                           "--basic-user": "a web feed", "--password-env": "a web feed", "--password-file": "a web feed",
                           "--bearer-env": "a web feed", "--bearer-file": "a web feed"])
    }

    /// What `pull --json` says of a feed.
    struct PulledFeed: Decodable {
        var feed: String
        var new: Int
    }

    /// Runs `feedsync ARGUMENTS` in this process with ``registry``: its exit status and what it
    /// printed on standard output.
    func feedsync(_ arguments: [String]) async throws -> (status: App.ExitStatus, stdout: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("registry-output-\(UUID().uuidString)")
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        defer { try? FileManager.default.removeItem(at: file) }
        let output = CheckedOutput(descriptor: descriptor, name: "the test's output")
        let status = await FeedsyncCLI.$registry.withValue(Self.registry) { await FeedsyncCLI.dispatch(arguments, output: output) }
        try output.close()
        return (status, try String(contentsOf: file, encoding: .utf8))
    }

    /// The `posts` section of the feed `name`, as the config at `path` holds it.
    func posts(of name: String, in path: String) throws -> [String: ConfigValue] {
        guard case .object(let root) = try ConfigJSON.parse(Data(contentsOf: URL(fileURLWithPath: path))), case .array(let feeds)? = root["feeds"],
              case .object(let entry)? = feeds.first(where: { if case .object(let entry) = $0 { entry["name"] == .string(name) } else { false } }),
              case .object(let posts)? = entry["posts"] else { return [:] }
        return posts
    }

    func makeFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("registry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}
