import Core
import Foundation
import IntegrationKit

/// `feedsync login mastodon SERVER` and `logout` of its feeds: OAuth in the browser, a token
/// file with its app file beside it, a home-timeline feed that reads it.
struct MastodonSignIn: SignInFlow {
    let label = "Mastodon"
    let place = "a Mastodon server"
    let argument = "SERVER"
    let options = [
        CommandOption("--paste", "paste the code shown by the server instead of a loopback callback (the default without a display)"),
        CommandOption("--callback", "take the code through a loopback callback (the default with a display)"),
    ]

    /// How long a sign-in may wait for the person.
    static let patience: TimeInterval = 300

    /// Signs in, then — all decided before any file is written — keeps the token and its app
    /// file and adds the home feed, or, when the account has a login in the config already,
    /// replaces that login's token in place and revokes the old one.
    func signIn(_ serverText: String, _ context: any SignInContext) async throws {
        let server = try context.server(serverText)
        try context.readConfig()
        let host = server.host ?? serverText
        // What can be decided before the browser opens is, so no sign-in is spent on it.
        if let given = context.givenSecretFile {
            try context.checkSecretFile(given)
            try context.checkSecretFile(MastodonAppFile.url(for: given))
        }
        if context.option("--name") != nil {
            _ = try context.target(request(server, account: nil, context))
        }

        let login = MastodonLogin(server: server)
        let (token, app) = try await authorize(login, host: host, context)
        let account: MastodonLogin.Account
        let target: SignInTarget
        let old: (token: String, app: MastodonAppFile?)?
        do {
            account = try await login.account(token: token)
            target = try context.target(request(server, account: account.username, context))
            let appFile = MastodonAppFile.url(for: target.secretFile)
            let replacing = try context.write(secret: token.revealed, to: target.secretFile)
            let replacingApp = try context.write(secret: MastodonAppFile(server: server, app: app, account: account.username).json, to: appFile)
            if replacingApp && !target.isRefresh && MastodonAppFile.parse(context.readSecretFile(appFile)) == nil {
                throw ServiceError(.refused, "saving the app file \(appFile.path)", "a file is there that is not a login's app file; remove it or pass another --token-file")
            }
            old = replacing ? context.readSecretFile(target.secretFile).map { ($0, MastodonAppFile.parse(context.readSecretFile(appFile))) } : nil
            if target.addsFeed {
                try context.addFeed(NewFeed(name: target.name, interval: "5m", posts: [
                    ("integration", .string(MastodonIntegration.name)), ("server", .string(server.absoluteString)),
                    ("accessTokenFile", .string(context.configPath(target.secretFile))), ("timeline", .string("home")),
                ]))
            } else if target.isRefresh {
                try context.keepConfig()
            }
            try context.commit()
        } catch {
            // The token this sign-in made serves nothing now: it is revoked, not left valid.
            try? await login.revoke(token: token, app: app)
            throw error
        }

        let handle = "@\(account.username)@\(host)"
        try context.say("logged in as \(handle)")
        if target.isRefresh {
            try context.say("token replaced in \(target.secretFile.path) (mode 0600), which \(target.refreshedFeeds) read with")
        } else {
            try context.say("token saved in \(target.secretFile.path) (mode 0600)")
        }
        if let old, old.token != token.revealed { try await revokeReplaced(old.token, old.app, context) }
        if target.addsFeed {
            try await context.announce("added feed \(target.name) (\(handle), home timeline) to \(context.configName)")
        } else if target.isRefresh {
            try await context.reloadDaemons()
        }
    }

    /// What decides where a login goes; `account` is `nil` before the sign-in tells it. A feed
    /// on the same server whose app file names the account is its login.
    func request(_ server: URL, account: String?, _ context: any SignInContext) -> SignInRequest {
        let host = server.host ?? server.absoluteString
        return SignInRequest(
            integration: MastodonIntegration.name, secretKey: "accessTokenFile",
            account: account.map { "@\($0)@\(host)" } ?? "an account on \(host)",
            defaultName: FeedNaming.name(from: "\(account ?? "me")-\(host)"), secretFileSuffix: "token"
        ) { posts, tokenFile in
            guard case .string(let text)? = posts["server"], let feedServer = URL(string: text.contains("://") ? text : "https://\(text)"),
                  Origin(feedServer) == Origin(server) else { return false }
            guard let account, let recorded = MastodonAppFile.parse(context.readSecretFile(MastodonAppFile.url(for: tokenFile)))?.account else {
                return nil
            }
            return recorded.lowercased() == account.lowercased()
        }
    }

    /// Revokes the token a second login replaced, with the app it was issued to; a token that
    /// cannot be revoked here is a warning (the new one is in place either way).
    func revokeReplaced(_ token: String, _ app: MastodonAppFile?, _ context: any SignInContext) async throws {
        let advice = "revoke it in the server's settings (Preferences → Account → Authorized apps)"
        guard let app else {
            context.warn("the replaced token had no app file beside it, so it cannot be revoked here; \(advice)")
            return
        }
        let origin = Origin(app.server)?.description ?? Terminal.safe(app.server.absoluteString, limit: 200)
        do {
            try await MastodonLogin(server: app.server).revoke(token: Secret(token), app: app.app)
            try context.say("revoked the replaced token at \(origin)")
        } catch {
            let reason = (error as? ServiceError)?.reason ?? "\(error)"
            context.warn("the replaced token could not be revoked at \(origin) (\(Terminal.safe(reason, limit: 300))); \(advice)")
        }
    }

    /// Revokes the feed's token (`POST /oauth/revoke`, with the app beside it) once the config
    /// edit checks out; the token file and its app file go when the config is saved.
    func signOut(feed: String, posts: [String: ConfigValue], _ context: any SignOutContext) async throws -> SignedOut {
        let shown = Terminal.safe(feed, limit: 80)
        guard case .string(let path)? = posts["accessTokenFile"] else {
            throw context.usageError("feed \(shown) takes its token from the environment, not from a login's file; remove it with `feedsync remove \(shown)`")
        }
        let tokenFile = context.resolve(path: path)
        try context.refuseShared(tokenFile)
        // Never through a symlink: what is sent to the server as the token is the login's file.
        guard let token = context.readSecretFile(tokenFile), !token.isEmpty else {
            throw ServiceError(.notFound, "reading the token of feed \(shown)", "\(tokenFile.path) is missing, empty or not a regular file, so there is no token to revoke; "
                               + "take the feed out with `feedsync remove \(shown)` and revoke the token in the server's settings")
        }
        let appFile = MastodonAppFile.url(for: tokenFile)
        var before: [String] = []
        if let app = MastodonAppFile.parse(context.readSecretFile(appFile)) {
            // Revoked once the edit is known to check out, and before it is saved: a token
            // that stays valid on the server is not logged out of.
            try context.prepare()
            do {
                try await MastodonLogin(server: app.server).revoke(token: Secret(token), app: app.app)
            } catch {
                context.discard()
                throw error
            }
            before.append("revoked the token at \(app.server.host ?? app.server.absoluteString)")
        } else {
            context.warn("\(appFile.path) is missing, so the token cannot be revoked here; revoke it in the server's settings (Preferences → Account → Authorized apps)")
        }
        context.remove(tokenFile)
        context.remove(appFile)
        return SignedOut(before: before, after: ["deleted \(tokenFile.path)"])
    }
}
