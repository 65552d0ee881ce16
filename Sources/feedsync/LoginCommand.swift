import App
import Bluesky
import Core
import Foundation
import IntegrationKit
import Mastodon
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `feedsync login mastodon SERVER` and `feedsync login bluesky HANDLE`: sign in, keep the
/// secret in a 0600 file, and add a feed for the account's home timeline.
enum LoginCommand: Command {
    static let words = ["login"]
    static let summary = "Sign in to a Mastodon server or Bluesky and add your home timeline."
    static let synopsis = "login mastodon SERVER | login bluesky HANDLE [--name NAME] [--no-feed] [--token-file PATH] [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [
        .config,
        .init("--name", value: "NAME", "the feed's name (default: the account's handle)"),
        .init("--no-feed", "sign in and keep the secret, but add no feed"),
        .init("--token-file", value: "PATH", "where the token or app password goes (default: beside the store, NAME.token)"),
        .init("--service", value: "URL", "Bluesky: the PDS to sign in to (default https://bsky.social)"),
        .init("--paste", "Mastodon: paste the code shown by the server instead of a loopback callback (the default without a display)"),
        .init("--callback", "Mastodon: take the code through a loopback callback (the default with a display)"),
    ]

    /// How long a sign-in may wait for the person.
    static let patience: TimeInterval = 300

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 2 else {
            throw UsageError("name the network and the account: login mastodon SERVER, or login bluesky HANDLE", usage: usage)
        }
        switch options.positionals[0].lowercased() {
        case "mastodon": return try await mastodon(options.positionals[1], options, output)
        case "bluesky": return try await bluesky(options.positionals[1], options, output)
        default:
            throw UsageError("\"\(Terminal.safe(options.positionals[0], limit: 40))\" is not a network feedsync signs in to; use mastodon or bluesky", usage: usage)
        }
    }

    // MARK: Mastodon

    static func mastodon(_ serverText: String, _ options: CommandLineOptions, _ output: CheckedOutput) async throws -> ExitStatus {
        let server = try serverURL(serverText)
        var editor = try ConfigEditor(configPath: options["--config"])
        let login = MastodonLogin(server: server)
        let pkce = MastodonLogin.PKCE()
        let state = MastodonLogin.PKCE().verifier
        let display = !(ProcessInfo.processInfo.environment["DISPLAY"] ?? "").isEmpty
            || !(ProcessInfo.processInfo.environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        let paste = options.has("--paste") || (!options.has("--callback") && !display)
        let host = server.host ?? serverText

        let code: String
        let redirect: String
        let app: MastodonLogin.App
        if paste {
            redirect = MastodonLogin.outOfBand
            app = try await login.register(redirectURIs: [redirect])
            try output.line("Open this address in a browser, sign in to \(host) and allow feedsync to read:")
            try output.line("  \(login.authorizationURL(app: app, redirectURI: redirect, state: state, challenge: pkce.challenge).absoluteString)")
            try output.write("Then paste the authorization code it shows here: ")
            try output.flush()
            guard let pasted = await readLine(within: patience)?.trimmingCharacters(in: .whitespaces), !pasted.isEmpty else {
                throw ServiceError(.unauthorized, "signing in to \(host)", "no authorization code was pasted")
            }
            code = pasted
        } else {
            let waiter = CallbackWaiter(state: state)
            let listener = try HTTPListener(address: try ListenAddress("127.0.0.1:1").withPort(0), loopbackOnly: true, handler: waiter.handle)
            listener.start()
            defer { listener.stop() }
            redirect = "http://127.0.0.1:\(listener.port)/callback"
            app = try await login.register(redirectURIs: [redirect])
            let url = login.authorizationURL(app: app, redirectURI: redirect, state: state, challenge: pkce.challenge)
            try output.line("Open this address in a browser, sign in to \(host) and allow feedsync to read:")
            try output.line("  \(url.absoluteString)")
            try output.line("Waiting for the browser to come back to \(redirect) (up to \(Int(patience / 60)) minutes)…")
            try output.flush()
            if display { openInBrowser(url) }
            code = try await waiter.code(within: patience, host: host)
        }
        let token = try await login.exchange(code: code, app: app, redirectURI: redirect, verifier: pkce.verifier)
        let account = try await login.account(token: token)
        let handle = "@\(account.username)@\(host)"
        let name = options["--name"] ?? ConfigChange.feedName(from: "\(account.username)-\(host)")

        let tokenFile = try secretFile(options, editor, name: name, suffix: "token")
        try SecretFile.write(token.revealed, to: tokenFile)
        try SecretFile.write("{\"server\": \(ConfigEditor.quote(server.absoluteString)), \"client_id\": \(ConfigEditor.quote(app.clientID)), "
                             + "\"client_secret\": \(ConfigEditor.quote(app.clientSecret))}", to: appFile(tokenFile))
        try output.line("logged in as \(handle)")
        try output.line("token saved in \(tokenFile.path) (mode 0600)")
        guard !options.has("--no-feed") else { return .ok }
        do {
            try editor.addFeed(name: name, fields: [
                ("interval", .string("5m")),
                ("posts", .object([("integration", .string("mastodon")), ("server", .string(server.absoluteString)),
                                   ("accessTokenFile", .string(ConfigChange.configPath(tokenFile, editor))), ("timeline", .string("home"))])),
            ], usage: usage)
            try await ConfigChange.commit(editor, options, output, saying: "added feed \(name) (\(handle), home timeline) to \(editor.displayName)")
        } catch {
            // Nothing half done: the token goes when its feed could not be added.
            SecretFile.remove(tokenFile)
            SecretFile.remove(appFile(tokenFile))
            throw error
        }
        return .ok
    }

    /// Where the client's id and secret are kept, beside the token, for `logout` to revoke it.
    static func appFile(_ tokenFile: URL) -> URL { tokenFile.appendingPathExtension("app") }

    // MARK: Bluesky

    static func bluesky(_ handle: String, _ options: CommandLineOptions, _ output: CheckedOutput) async throws -> ExitStatus {
        let identifier = handle.hasPrefix("@") ? String(handle.dropFirst()) : handle
        guard !identifier.isEmpty, identifier.utf8.count <= 253, identifier.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw UsageError("\"\(Terminal.safe(handle, limit: 80))\" is not a Bluesky handle or DID", usage: usage)
        }
        let service = try serverURL(options["--service"] ?? "https://bsky.social")
        var editor = try ConfigEditor(configPath: options["--config"])
        let password = try readPassword(prompt: "App password for \(identifier) (make one at Settings → Privacy and security → App passwords): ")
        if password.range(of: #"^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$"#, options: .regularExpression) == nil {
            printError("feedsync: warning: that does not look like an app password (xxxx-xxxx-xxxx-xxxx); an account's main password works but gives feedsync every right")
        }
        let name = options["--name"] ?? ConfigChange.feedName(from: identifier)
        let passwordFile = try secretFile(options, editor, name: name, suffix: "app-password")
        try SecretFile.write(password, to: passwordFile)
        do {
            let posts: [(String, ConfigEditor.Value)] = [
                ("integration", .string("bluesky")), ("service", .string(service.absoluteString)), ("identifier", .string(identifier)),
                ("appPasswordFile", .string(ConfigChange.configPath(passwordFile, editor))), ("timeline", .string("home")),
            ]
            // The same backend a pull builds, so the check is the pull's own login.
            let section = ConfigSection(Dictionary(uniqueKeysWithValues: posts.map { key, value -> (String, ConfigValue) in
                if case .string(let text) = value { return (key, .string(text)) }
                return (key, .null)
            }), path: "posts", context: ConfigContext(fileName: editor.displayName, directory: editor.url.deletingLastPathComponent(),
                                                    environment: ProcessInfo.processInfo.environment))
            let backend = try BlueskyIntegration.makeBackend(section, context: IntegrationContext(userAgent: "feedsync/\(feedsyncVersion)"))
            guard let authentication = backend.authentication else { throw ServiceError(.contractViolation, "signing in", "no login") }
            let session = try await authentication.logIn()
            await backend.lifecycle.tearDown()
            try output.line("logged in as @\(identifier) on \(service.host ?? service.absoluteString)")
            try output.line("app password saved in \(passwordFile.path) (mode 0600)")
            guard !options.has("--no-feed") else { return .ok }
            try editor.addFeed(name: name, fields: [("interval", .string("5m")), ("posts", .object(posts))], usage: usage)
            try await ConfigChange.commit(editor, options, output, saying: "added feed \(name) (@\(identifier), home timeline) to \(editor.displayName)")
            // The session just made is the account's: the first pull reuses it instead of logging in again.
            var load = localOnly
            load.createStore = true
            load.notice = { _ in }
            if let account = backend.account {
                try? await withRuntime(CommandLineOptions.config(editor.url.path), load) { runtime in
                    try await runtime.store.saveSession(session, of: account)
                }
            }
        } catch {
            SecretFile.remove(passwordFile)
            throw error
        }
        return .ok
    }

    // MARK: Shared

    /// A server as a person types it: `example.social` or `https://example.social`; plain http
    /// only to this machine.
    static func serverURL(_ text: String) throws -> URL {
        let withScheme = text.contains("://") ? text : "https://\(text)"
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.user == nil, url.password == nil else {
            throw UsageError("\"\(Terminal.safe(text, limit: 80))\" is not a server; write example.social or https://example.social", usage: usage)
        }
        if scheme == "http" && !ConfigSection.isLoopback(host) {
            throw UsageError("\"\(Terminal.safe(text, limit: 80))\" is plain http; sign in over https (http is for loopback test servers only)", usage: usage)
        }
        return url
    }

    static func secretFile(_ options: CommandLineOptions, _ editor: ConfigEditor, name: String, suffix: String) throws -> URL {
        if let given = options["--token-file"] {
            let expanded = (given as NSString).expandingTildeInPath
            return expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded)
                : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(expanded)
        }
        return ConfigChange.secretFolder(editor).appendingPathComponent("\(name).\(suffix)")
    }

    /// A line from standard input, or `nil` at its end or after `seconds`.
    static func readLine(within seconds: TimeInterval) async -> String? {
        await withTaskGroup(of: String?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread { continuation.resume(returning: Swift.readLine(strippingNewline: true)) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// A password from the terminal without echo, or a line of standard input when it is not one.
    static func readPassword(prompt: String) throws -> String {
        var line: String?
        if isatty(STDIN_FILENO) == 1 {
            FileHandle.standardError.write(Data(prompt.utf8))
            var saved = termios()
            tcgetattr(STDIN_FILENO, &saved)
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &silent)
            line = Swift.readLine(strippingNewline: true)
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        } else {
            line = Swift.readLine(strippingNewline: true)
        }
        guard let password = line?.trimmingCharacters(in: .whitespaces), !password.isEmpty else {
            throw UsageError("no app password given (type it at the prompt, or pipe it on standard input)", usage: usage)
        }
        return password
    }

    /// Opens `url` with xdg-open, quietly; the address is printed anyway.
    static func openInBrowser(_ url: URL) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}

/// Waits for the one good callback of a sign-in: a request to `/callback` carrying the state
/// this sign-in made and a code, or the server's error.
final class CallbackWaiter: Sendable {
    private let state: String
    private let outcome = Mutex<Result<String, ServiceError>?>(nil)

    init(state: String) { self.state = state }

    /// What the listener answers; the first callback decides the outcome.
    func handle(_ request: HTTPListener.Request) -> HTTPListener.Response {
        guard request.path == "/callback" else { return .init(status: 404, body: "not found\n") }
        let items = URLComponents(string: "/?" + request.query)?.queryItems ?? []
        func item(_ name: String) -> String? { items.first { $0.name == name }?.value }
        let operation = "signing in"
        let result: Result<String, ServiceError>
        if let error = item("error") {
            let description = item("error_description").map { ": \(Terminal.safe($0, limit: 200))" } ?? ""
            result = .failure(ServiceError(.unauthorized, operation, "the server refused the sign-in (\(Terminal.safe(error, limit: 80))\(description))"))
        } else if item("state") != state {
            result = .failure(ServiceError(.unauthorized, operation, "the callback's state does not match this sign-in's, so it is not the answer to it; start again"))
        } else if let code = item("code"), !code.isEmpty, code.utf8.count <= 2048 {
            result = .success(code)
        } else {
            result = .failure(ServiceError(.unauthorized, operation, "the callback carries no authorization code"))
        }
        let first = outcome.withLock { current -> Bool in
            guard current == nil else { return false }
            current = result
            return true
        }
        guard first else { return .init(status: 409, body: "this sign-in is over; return to the terminal\n") }
        switch result {
        case .success: return .init(status: 200, contentType: "text/html; charset=utf-8",
                                    body: "<!doctype html><title>feedsync</title><p>Signed in. You can close this window and return to the terminal.</p>\n")
        case .failure(let error): return .init(status: 400, body: "\(error.reason)\n")
        }
    }

    /// The code, or the sign-in's failure; gives up after `seconds`.
    func code(within seconds: TimeInterval, host: String) async throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let result = outcome.withLock({ $0 }) { return try result.get() }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ServiceError(.unauthorized, "signing in to \(host)", "no answer came back from the browser within \(Int(seconds / 60)) minutes; start again")
    }
}

