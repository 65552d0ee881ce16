import Core
import Foundation
import IntegrationKit

/// `feedsync login bluesky HANDLE` and `logout` of its feeds: an app password, checked with the
/// service before it is kept in a 0600 file, and a home-timeline feed that reads it.
struct BlueskySignIn: SignInFlow {
    let label = "Bluesky"
    let place = "Bluesky"
    let argument = "HANDLE"
    let options = [CommandOption("--service", value: "URL", "the PDS to sign in to (default https://bsky.social)")]

    /// Everything that can be decided from the config is, before the password is asked for;
    /// the password is checked with the service before any file is written; then it is kept (a
    /// new file and feed, or — when the account has a login in the config already — that
    /// login's file, replaced in place).
    func signIn(_ handle: String, _ context: any SignInContext) async throws {
        let identifier = handle.hasPrefix("@") ? String(handle.dropFirst()) : handle
        guard !identifier.isEmpty, identifier.utf8.count <= 253, identifier.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw context.usageError("\"\(Terminal.safe(handle, limit: 80))\" is not a Bluesky handle or DID")
        }
        let service = try context.server(context.option("--service") ?? "https://bsky.social")
        try context.readConfig()
        let target = try context.target(request(identifier, service))
        try context.checkSecretFile(target.secretFile)
        let prompt = "App password for \(identifier) (make one at Settings → Privacy and security → App passwords): "
        guard let password = context.readSecret(prompt: prompt), !password.isEmpty else {
            throw context.usageError("no app password given (type it at the prompt, or pipe it on standard input)")
        }
        // Registered for redaction from the moment it is read, whatever fails next.
        let registered = Secret(password)
        defer { withExtendedLifetime(registered) {} }
        if password.range(of: #"^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$"#, options: .regularExpression) == nil {
            context.warn("that does not look like an app password (xxxx-xxxx-xxxx-xxxx); an account's main password works but gives feedsync every right")
        }
        try context.write(secret: password, to: target.secretFile)
        let posts: [(key: String, value: ConfigValue)] = [
            ("integration", .string(BlueskyIntegration.name)), ("service", .string(service.absoluteString)), ("identifier", .string(identifier)),
            ("appPasswordFile", .string(context.configPath(target.secretFile))), ("timeline", .string("home")),
        ]
        if target.addsFeed {
            try context.addFeed(NewFeed(name: target.name, interval: "5m", posts: posts))
        } else if target.isRefresh {
            try context.keepConfig()
        }

        // The same backend a pull builds, so the check is the pull's own login; the password
        // reaches it from memory, not from a file written before it was known to be good.
        let variable = "FEEDSYNC_LOGIN_APP_PASSWORD"
        var fields = Dictionary(uniqueKeysWithValues: posts.map { ($0.key, $0.value) })
        fields["appPasswordFile"] = nil
        fields["appPasswordEnv"] = .string(variable)
        let section = ConfigSection(fields, path: "posts", context: ConfigContext(fileName: context.configName, directory: context.configFolder,
                                                                                 environment: [variable: password]))
        let backend = try BlueskyIntegration.makeBackend(section, context: IntegrationContext(userAgent: context.userAgent))
        guard let authentication = backend.authentication else { throw ServiceError(.contractViolation, "signing in", "no login") }
        let session = try await authentication.logIn()
        await backend.lifecycle.tearDown()
        try context.commit()

        try context.say("logged in as @\(identifier) on \(service.host ?? service.absoluteString)")
        if target.isRefresh {
            try context.say("app password replaced in \(target.secretFile.path) (mode 0600), which \(target.refreshedFeeds) read with; "
                            + "the old app password stays valid until you revoke it in Bluesky's settings (Privacy and security → App passwords)")
        } else {
            try context.say("app password saved in \(target.secretFile.path) (mode 0600)")
        }
        if target.addsFeed {
            try await context.announce("added feed \(target.name) (@\(identifier), home timeline) to \(context.configName)")
        } else if target.isRefresh {
            try await context.reloadDaemons()
        }
        // The session just made is the account's: the next pull reuses it instead of logging in again.
        guard target.addsFeed || target.isRefresh, let account = backend.account else { return }
        await context.saveSession(session, of: account)
    }

    /// What decides where a login goes: a feed of the same service and identifier is this account's.
    func request(_ identifier: String, _ service: URL) -> SignInRequest {
        SignInRequest(integration: BlueskyIntegration.name, secretKey: "appPasswordFile", account: "@\(identifier)",
                      defaultName: FeedNaming.name(from: identifier), secretFileSuffix: "app-password") { posts, _ in
            let text: String
            if case .string(let given)? = posts["service"] { text = given } else { text = "https://bsky.social" }
            guard let feedService = URL(string: text.contains("://") ? text : "https://\(text)"), Origin(feedService) == Origin(service),
                  case .string(let name)? = posts["identifier"] else { return false }
            let normalized = { (name: String) in (name.hasPrefix("@") ? String(name.dropFirst()) : name).lowercased() }
            return normalized(name) == normalized(identifier)
        }
    }

    /// Deletes the app-password file once the config is saved; the password itself is revoked
    /// in Bluesky's settings, which feedsync cannot reach.
    func signOut(feed: String, posts: [String: ConfigValue], _ context: any SignOutContext) async throws -> SignedOut {
        guard case .string(let path)? = posts["appPasswordFile"] else { return SignedOut() }
        let file = context.resolve(path: path)
        try context.refuseShared(file)
        context.remove(file)
        return SignedOut(after: ["deleted \(file.path); revoke the app password itself in Bluesky's settings (Privacy and security → App passwords)"])
    }
}
