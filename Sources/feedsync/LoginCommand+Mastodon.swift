import App
import Core
import Foundation
import IntegrationKit
import Mastodon

extension LoginCommand {
    /// `login mastodon SERVER`: signs in, then — all decided before any file is written — keeps
    /// the token and its app file and adds the home feed, or, when the account has a login in
    /// the config already, replaces that login's token in place and revokes the old one.
    static func mastodon(_ serverText: String, _ options: CommandLineOptions, _ output: CheckedOutput) async throws -> ExitStatus {
        let server = try serverURL(serverText)
        var editor = try ConfigEditor(configPath: options["--config"])
        let host = server.host ?? serverText
        // What can be decided before the browser opens is, so no sign-in is spent on it.
        if let given = givenSecretFile(options) {
            _ = try SecretFile.check(given)
            _ = try SecretFile.check(MastodonAppFile.url(for: given))
        }
        if options["--name"] != nil {
            _ = try LoginTarget.decide(mastodonRequest(server, account: nil, options, editor), in: editor, usage: usage)
        }

        let login = MastodonLogin(server: server)
        let (token, app) = try await signIn(login, host: host, options, output)
        let account: MastodonLogin.Account
        let target: LoginTarget
        let old: (token: String, app: MastodonAppFile?)?
        do {
            account = try await login.account(token: token)
            target = try LoginTarget.decide(mastodonRequest(server, account: account.username, options, editor), in: editor, usage: usage)
            let appFile = MastodonAppFile.url(for: target.secretFile)
            let changes = FileTransaction()
            let replacing = try changes.write(secret: token.revealed, to: target.secretFile)
            let replacingApp = try changes.write(secret: MastodonAppFile(server: server, app: app, account: account.username).json, to: appFile)
            if replacingApp && !target.isRefresh && MastodonAppFile.read(appFile) == nil {
                throw ServiceError(.refused, "saving the app file \(appFile.path)", "a file is there that is not a login's app file; remove it or pass another --token-file")
            }
            old = replacing ? SecretFile.read(target.secretFile).map { ($0, MastodonAppFile.read(appFile)) } : nil
            if target.addsFeed {
                try editor.addFeed(name: target.name, fields: [
                    ("interval", .string("5m")),
                    ("posts", .object([("integration", .string("mastodon")), ("server", .string(server.absoluteString)),
                                       ("accessTokenFile", .string(ConfigChange.configPath(target.secretFile, editor))), ("timeline", .string("home"))])),
                ], usage: usage)
                changes.save(editor)
            } else if target.isRefresh {
                changes.keep(editor)
            }
            try changes.commit()
        } catch {
            // The token this sign-in made serves nothing now: it is revoked, not left valid.
            try? await login.revoke(token: token, app: app)
            throw error
        }

        let handle = "@\(account.username)@\(host)"
        try output.line("logged in as \(handle)")
        if target.isRefresh {
            try output.line("token replaced in \(target.secretFile.path) (mode 0600), which \(feeds(target.refreshed)) read with")
        } else {
            try output.line("token saved in \(target.secretFile.path) (mode 0600)")
        }
        if let old, old.token != token.revealed { try await revokeReplaced(old.token, old.app, output) }
        if target.addsFeed {
            try await ConfigChange.announce(editor, output, saying: "added feed \(target.name) (\(handle), home timeline) to \(editor.displayName)")
        } else if target.isRefresh {
            try await ConfigChange.reloadDaemons(editor, output)
        }
        return .ok
    }

    /// What decides where a Mastodon login goes; `account` is `nil` before the sign-in tells it.
    static func mastodonRequest(_ server: URL, account: String?, _ options: CommandLineOptions, _ editor: ConfigEditor) -> LoginTarget.Request {
        let host = server.host ?? server.absoluteString
        return LoginTarget.Request(
            integration: "mastodon", secretKey: "accessTokenFile", account: account.map { "@\($0)@\(host)" } ?? "an account on \(host)",
            name: options["--name"], defaultName: ConfigChange.feedName(from: "\(account ?? "me")-\(host)"),
            secretFile: givenSecretFile(options), defaultSecretFile: { ConfigChange.secretFolder(editor).appendingPathComponent("\($0).token") },
            addsFeed: !options.has("--no-feed")
        ) { posts, tokenFile in
            guard case .string(let text)? = posts["server"], let feedServer = URL(string: text.contains("://") ? text : "https://\(text)"),
                  Origin(feedServer) == Origin(server) else { return false }
            guard let account, let recorded = MastodonAppFile.read(MastodonAppFile.url(for: tokenFile))?.account else { return nil }
            return recorded.lowercased() == account.lowercased()
        }
    }

    /// Signs in in the browser: registers feedsync, shows the authorization URL, and takes the
    /// code from the loopback callback or as pasted; returns the token and the app it belongs to.
    static func signIn(_ login: MastodonLogin, host: String, _ options: CommandLineOptions, _ output: CheckedOutput) async throws -> (Secret, MastodonLogin.App) {
        let pkce = MastodonLogin.PKCE()
        let state = MastodonLogin.PKCE().verifier
        let display = !(ProcessInfo.processInfo.environment["DISPLAY"] ?? "").isEmpty
            || !(ProcessInfo.processInfo.environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        let paste = options.has("--paste") || (!options.has("--callback") && !display)
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
            let callback = OAuthCallback(state: state)
            let listener = try HTTPListener(address: try ListenAddress("127.0.0.1:1").withPort(0), loopbackOnly: true, handler: callback.handle)
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
            code = try await callback.code(within: patience, host: host)
        }
        return (try await login.exchange(code: code, app: app, redirectURI: redirect, verifier: pkce.verifier), app)
    }

    /// Revokes the token a second login replaced, with the app it was issued to; a token that
    /// cannot be revoked here is a warning (the new one is in place either way).
    static func revokeReplaced(_ token: String, _ app: MastodonAppFile?, _ output: CheckedOutput) async throws {
        let advice = "revoke it in the server's settings (Preferences → Account → Authorized apps)"
        guard let app else {
            printError("feedsync: warning: the replaced token had no app file beside it, so it cannot be revoked here; \(advice)")
            return
        }
        let origin = Origin(app.server)?.description ?? Terminal.safe(app.server.absoluteString, limit: 200)
        do {
            try await MastodonLogin(server: app.server).revoke(token: Secret(token), app: app.app)
            try output.line("revoked the replaced token at \(origin)")
        } catch {
            let reason = (error as? ServiceError)?.reason ?? "\(error)"
            printError("feedsync: warning: the replaced token could not be revoked at \(origin) (\(Terminal.safe(reason, limit: 300))); \(advice)")
        }
    }
}
