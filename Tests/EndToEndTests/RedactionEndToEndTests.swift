import Foundation
import PostgresTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Servers that repeat a request's own secret in their errors (`Fixtures/credential_echo.py`):
/// each kind of secret of each backend that holds one, in each place an answer can carry it
/// (the status line, the JSON error, an HTML page, a header, a redirect's `Location`) and each
/// way a server can write it (as it is, encoded, in base64, cut short, split). None of it may
/// reach standard output or error, `status`, `status --json`, the daemon's log, the SQLite file
/// and its WAL, or PostgreSQL's error columns (``SecretSearch`` looks, apart from the program).
@Suite struct RedactionEndToEndTests {
    /// One kind of secret of one backend, and the request that carries it.
    struct Kind: CustomTestStringConvertible, Sendable {
        enum Backend: Sendable { case httpapi, mastodon, bluesky }
        var name: String
        var backend: Backend
        /// What the echo answers: a piece of the request's path, and where in it the secret is.
        var path: String
        var source: String
        var status: Int
        /// Whether a clean pull comes first, to store the session whose token is then sent.
        var primed = false
        /// Control calls before each run (tokens made to expire, so the next pull refreshes).
        var before: [String] = []
        var testDescription: String { name }
    }

    /// Where the server puts the secret, and how it writes it.
    struct Variant: CustomStringConvertible {
        var places: [String]
        var form: String
        var description: String { "\(places.joined(separator: "+")) \(form)" }
    }

    static let password = "pw-redaction-SECRET-4711"
    static let token = "tok-redaction-SECRET-0123456789abcdef"
    static let appPassword = "abcd-efgh-SECRET-mnop"

    static let kinds: [Kind] = [
        Kind(name: "httpapi password", backend: .httpapi, path: "/v1/auth/login", source: "password", status: 401),
        Kind(name: "httpapi access token", backend: .httpapi, path: "/v1/feed", source: "authorization", status: 401),
        Kind(name: "httpapi refresh token", backend: .httpapi, path: "/v1/auth/refresh", source: "refresh_token", status: 400, primed: true),
        Kind(name: "mastodon access token", backend: .mastodon, path: "/api/v1/timelines/home", source: "authorization", status: 401),
        Kind(name: "bluesky app password", backend: .bluesky, path: "createSession", source: "password", status: 401),
        Kind(name: "bluesky access JWT", backend: .bluesky, path: "getTimeline", source: "authorization", status: 401),
        // A refresh refused as bad (400) is answered with a login; a server error is retried, then shown.
        Kind(name: "bluesky refresh JWT", backend: .bluesky, path: "refreshSession", source: "authorization", status: 500,
             primed: true, before: ["/_control/expire-tokens"]),
    ]

    static let places = [["reason", "json", "header"], ["json"], ["html"], ["location"], ["json", "header"]]
    static let forms = ["verbatim", "percent", "percent-all", "percent-all-lower", "form", "double-percent", "json-unicode",
                        "json-slash", "html-entities", "html-hex", "base64", "basic", "basic-a", "basic-ab", "upper", "truncated", "split"]

    /// Five variants for the kind: every place, with forms taken in turn, so the kinds together cover every form twice.
    static func variants(_ kind: Kind) -> [Variant] {
        let offset = kinds.firstIndex { $0.name == kind.name } ?? 0
        return places.indices.map { Variant(places: places[$0], form: forms[(offset * places.count + $0) % forms.count]) }
    }

    /// The kind's fixture server, a store and config for it, and the environment holding its secret.
    struct Setup {
        let server: ReferenceServer
        let scratch: Scratch
        let config: String
        let environment: [String: String]
        /// The secret the config holds (the tokens a server issues are read from its echo).
        let configSecret: String
    }

    static func start(_ backend: Kind.Backend, store: String? = nil) throws -> Setup {
        let scratch = try Scratch()
        let storeJSON = store ?? #"{"integration": "sqlite", "path": "feedsync.sqlite"}"#
        let server: ReferenceServer, posts: String, environment: [String: String], secret: String
        switch backend {
        case .httpapi:
            // Tokens that last less than the refresh margin: every pull after a login refreshes.
            server = try ReferenceServer(posts: 20, extra: ["--password", password, "--token-ttl", "30"])
            posts = #"{"integration": "httpapi", "baseURL": "\#(server.baseURL)", "username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD"}"#
            (environment, secret) = (["FEEDSYNC_PASSWORD": password], password)
        case .mastodon:
            server = try ReferenceServer(script: "Fixtures/mastodon/server.py", arguments: ["--statuses", "20", "--token", token])
            posts = #"{"integration": "mastodon", "server": "\#(server.baseURL)", "accessTokenEnv": "MASTODON_TOKEN", "timeline": "home"}"#
            (environment, secret) = (["MASTODON_TOKEN": token], token)
        case .bluesky:
            server = try ReferenceServer(script: "Fixtures/bluesky/server.py", arguments: ["--posts", "20", "--password", appPassword])
            posts = #"{"integration": "bluesky", "service": "\#(server.baseURL)", "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home"}"#
            (environment, secret) = (["BLUESKY_APP_PASSWORD": appPassword], appPassword)
        }
        let json = #"{"store": \#(storeJSON), "feeds": [{"name": "home", "interval": "1h", "posts": \#(posts)}]}"#
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: config)
        return Setup(server: server, scratch: scratch, config: config.path, environment: environment, configSecret: secret)
    }

    /// Turns the echo on for `variant` of `kind` (or off, with `nil`).
    static func echo(_ setup: Setup, _ kind: Kind, _ variant: Variant?) async throws {
        var settings: [String: Any] = [:]
        if let variant {
            settings = ["path": kind.path, "source": kind.source, "where": variant.places, "form": variant.form]
            // A redirect's status is the fixture's own (302).
            if !variant.places.contains("location") { settings["status"] = kind.status }
        }
        let body = String(decoding: try JSONSerialization.data(withJSONObject: settings), as: UTF8.self)
        try await setup.server.control("POST", "/_control/echo", body: body)
    }

    static func echoed(_ setup: Setup) async throws -> [String] {
        try await setup.server.control("GET", "/_control/echo")["echoed"] as? [String] ?? []
    }

    /// What a person or a publisher sees after a run: `status` both ways and the database's bytes.
    static func published(_ setup: Setup) async throws -> [(String, String)] {
        let status = try await feedsync(["status", "--config", setup.config], environment: setup.environment)
        let json = try await feedsync(["status", "--config", setup.config, "--json"], environment: setup.environment)
        return [("status", status.stdout + status.stderr), ("status --json", json.stdout + json.stderr),
                ("the SQLite file and its WAL", SecretSearch.printableRuns(of: databaseBytes(setup.scratch)))]
    }

    /// The search the runs rely on finds each form a server writes, so a leak cannot pass unseen.
    @Test func theTestsOwnSearchFindsEveryFormOfTheSecret() {
        let secret = "tok+en/SECRET=0123456789"
        let bytes = Array(secret.utf8)
        let percentAll = bytes.map { String(format: "%%%02X", $0) }.joined()
        let forms = [
            secret, secret.uppercased(), String(secret.prefix(9)) + "…", percentAll, percentAll.lowercased(),
            percentAll.replacingOccurrences(of: "%", with: "%25"), secret.replacingOccurrences(of: "/", with: "\\/"),
            bytes.map { String(format: "\\u%04x", $0) }.joined(), bytes.map { "&#\($0);" }.joined(), bytes.map { String(format: "&#x%X;", $0) }.joined(),
            Data(bytes).base64EncodedString(), "Basic " + Data(("feedsync:" + secret).utf8).base64EncodedString(),
            Data(("ab:" + secret).utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"),
        ]
        for form in forms {
            #expect(!SecretSearch.findings(of: secret, in: "error: \(form) was refused").isEmpty, "\(form)")
        }
        #expect(SecretSearch.findings(of: secret, in: "error: [redacted] was refused; tok+en/ and 0123456 are too short").isEmpty)
    }

    @Test(arguments: kinds)
    func aSecretRepeatedInAnErrorIsNeverPrintedNorStored(kind: Kind) async throws {
        let setup = try Self.start(kind.backend)
        if kind.primed {
            let clean = try await feedsync(["pull", "--config", setup.config], environment: setup.environment)
            #expect(clean.status == 0, "\(kind.name): \(clean.stderr)")
        }
        for variant in Self.variants(kind) {
            for call in kind.before { try await setup.server.control("POST", call) }
            try await Self.echo(setup, kind, variant)
            let pull = try await feedsync(["pull", "--config", setup.config], environment: setup.environment)
            let secrets = try await Self.echoed(setup)
            try await Self.echo(setup, kind, nil)
            // A run in which the server never saw the secret would prove nothing.
            #expect(!secrets.isEmpty && pull.status != 0, "\(kind.name) \(variant): \(pull.status) \(pull.stderr)")
            let outputs = [("pull's standard output", pull.stdout), ("pull's standard error", pull.stderr)] + (try await Self.published(setup))
            let leaks = SecretSearch.findings(of: secrets + [setup.configSecret], in: outputs)
            #expect(leaks.isEmpty, "\(kind.name) \(variant): \(leaks.prefix(5))")
            // Where the client reads the answer (its JSON error, a redirect's target), the error is shown, redacted.
            if variant.places.contains("json") || variant.places.contains("location") {
                #expect(pull.stderr.contains("[redacted]"), "\(kind.name) \(variant): \(pull.stderr)")
                #expect(try await sqlite(setup.scratch.database, "SELECT last_error FROM feeds").contains("[redacted]"))
            }
        }
    }

    @Test(arguments: [(0, "percent-all"), (1, "verbatim"), (3, "basic-ab"), (5, "split")])
    func theDaemonLogsTheErrorWithTheSecretRedacted(kindIndex: Int, form: String) async throws {
        let kind = Self.kinds[kindIndex]
        let setup = try Self.start(kind.backend)
        try await Self.echo(setup, kind, Variant(places: ["reason", "json", "header"], form: form))
        let daemon = try DaemonProcess(config: setup.config, in: setup.scratch, environment: setup.environment)
        #expect(try await eventually(within: 30) { daemon.log.contains("event=sync_failed") }, "\(daemon.log)")
        daemon.signal(SIGTERM)
        #expect(await daemon.exits(within: 15))
        let secrets = try await Self.echoed(setup)
        #expect(!secrets.isEmpty)
        #expect(daemon.log.contains("[redacted]"), "\(daemon.log)")
        let leaks = SecretSearch.findings(of: secrets + [setup.configSecret], in: [("the daemon's log", daemon.log)] + (try await Self.published(setup)))
        #expect(leaks.isEmpty, "\(kind.name) \(form): \(leaks.prefix(5))")
    }

    @Test(.needsPostgres, arguments: [0, 1, 3])
    func postgreSQLsErrorColumnsHoldNoSecret(kindIndex: Int) async throws {
        let kind = Self.kinds[kindIndex]
        let database = try await PostgresServer.makeDatabase()
        let setup = try Self.start(kind.backend, store: #"{"integration": "postgres", "url": "\#(database.url)"}"#)
        for variant in Self.variants(kind).prefix(3) {
            try await Self.echo(setup, kind, variant)
            let pull = try await feedsync(["pull", "--config", setup.config], environment: setup.environment)
            let secrets = try await Self.echoed(setup)
            try await Self.echo(setup, kind, nil)
            #expect(!secrets.isEmpty && pull.status != 0, "\(kind.name) \(variant): \(pull.stderr)")
            let columns = try await psql(database, "SELECT last_error FROM feeds UNION ALL SELECT error FROM sync_runs WHERE error IS NOT NULL")
            if variant.places.contains("json") { #expect(columns.contains("[redacted]"), "\(columns)") }
            let outputs = [("pull's standard error", pull.stderr), ("feeds.last_error and sync_runs.error", columns)]
            let leaks = SecretSearch.findings(of: secrets + [setup.configSecret], in: outputs + (try await Self.published(setup)).prefix(2))
            #expect(leaks.isEmpty, "\(kind.name) \(variant): \(leaks.prefix(5))")
        }
    }
}
