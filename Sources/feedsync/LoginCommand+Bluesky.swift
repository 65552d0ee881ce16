import App
import Bluesky
import Core
import Foundation
import IntegrationKit

extension LoginCommand {
    /// `login bluesky HANDLE`: everything that can be decided from the config is, before the
    /// password is asked for; the password is checked with the service before any file is
    /// written; then it is kept (a new file and feed, or — when the account has a login in the
    /// config already — that login's file, replaced in place).
    static func bluesky(_ handle: String, _ options: CommandLineOptions, _ output: CheckedOutput) async throws -> ExitStatus {
        let identifier = handle.hasPrefix("@") ? String(handle.dropFirst()) : handle
        guard !identifier.isEmpty, identifier.utf8.count <= 253, identifier.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw UsageError("\"\(Terminal.safe(handle, limit: 80))\" is not a Bluesky handle or DID", usage: usage)
        }
        let service = try serverURL(options["--service"] ?? "https://bsky.social")
        var editor = try ConfigEditor(configPath: options["--config"])
        let target = try LoginTarget.decide(blueskyRequest(identifier, service, options, editor), in: editor, usage: usage)
        _ = try SecretFile.check(target.secretFile)
        let password = try readPassword(prompt: "App password for \(identifier) (make one at Settings → Privacy and security → App passwords): ")
        // Registered for redaction from the moment it is read, whatever fails next.
        let registered = Secret(password)
        defer { withExtendedLifetime(registered) {} }
        if password.range(of: #"^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$"#, options: .regularExpression) == nil {
            printError("feedsync: warning: that does not look like an app password (xxxx-xxxx-xxxx-xxxx); an account's main password works but gives feedsync every right")
        }
        let plan = FileTransaction()
        try plan.write(secret: password, to: target.secretFile)
        let posts: [(String, ConfigEditor.Value)] = [
            ("integration", .string("bluesky")), ("service", .string(service.absoluteString)), ("identifier", .string(identifier)),
            ("appPasswordFile", .string(ConfigChange.configPath(target.secretFile, editor))), ("timeline", .string("home")),
        ]
        if target.addsFeed {
            try editor.addFeed(name: target.name, fields: [("interval", .string("5m")), ("posts", .object(posts))], usage: usage)
            plan.save(editor)
        } else if target.isRefresh {
            plan.keep(editor)
        }

        // The same backend a pull builds, so the check is the pull's own login; the password
        // reaches it from memory, not from a file written before it was known to be good.
        let variable = "FEEDSYNC_LOGIN_APP_PASSWORD"
        var fields = Dictionary(uniqueKeysWithValues: posts.compactMap { key, value -> (String, ConfigValue)? in
            guard case .string(let text) = value else { return nil }
            return (key, .string(text))
        })
        fields["appPasswordFile"] = nil
        fields["appPasswordEnv"] = .string(variable)
        let section = ConfigSection(fields, path: "posts", context: ConfigContext(fileName: editor.displayName, directory: editor.url.deletingLastPathComponent(),
                                                                                 environment: [variable: password]))
        let backend = try BlueskyIntegration.makeBackend(section, context: IntegrationContext(userAgent: "feedsync/\(feedsyncVersion)"))
        guard let authentication = backend.authentication else { throw ServiceError(.contractViolation, "signing in", "no login") }
        let session = try await authentication.logIn()
        await backend.lifecycle.tearDown()
        try plan.commit()

        try output.line("logged in as @\(identifier) on \(service.host ?? service.absoluteString)")
        if target.isRefresh {
            try output.line("app password replaced in \(target.secretFile.path) (mode 0600), which \(feeds(target.refreshed)) read with; "
                            + "the old app password stays valid until you revoke it in Bluesky's settings (Privacy and security → App passwords)")
        } else {
            try output.line("app password saved in \(target.secretFile.path) (mode 0600)")
        }
        if target.addsFeed {
            try await ConfigChange.announce(editor, output, saying: "added feed \(target.name) (@\(identifier), home timeline) to \(editor.displayName)")
        } else if target.isRefresh {
            try await ConfigChange.reloadDaemons(editor, output)
        }
        // The session just made is the account's: the next pull reuses it instead of logging in again.
        guard target.addsFeed || target.isRefresh, let account = backend.account else { return .ok }
        var load = localOnly
        load.createStore = true
        load.notice = { _ in }
        try? await withRuntime(CommandLineOptions.config(editor.url.path), load) { runtime in
            try await runtime.store.saveSession(session, of: account)
        }
        return .ok
    }

    /// What decides where a Bluesky login goes: a feed of the same service and identifier is this account's.
    static func blueskyRequest(_ identifier: String, _ service: URL, _ options: CommandLineOptions, _ editor: ConfigEditor) -> LoginTarget.Request {
        LoginTarget.Request(
            integration: "bluesky", secretKey: "appPasswordFile", account: "@\(identifier)", name: options["--name"],
            defaultName: ConfigChange.feedName(from: identifier), secretFile: givenSecretFile(options),
            defaultSecretFile: { ConfigChange.secretFolder(editor).appendingPathComponent("\($0).app-password") },
            addsFeed: !options.has("--no-feed")
        ) { posts, _ in
            let text: String
            if case .string(let given)? = posts["service"] { text = given } else { text = "https://bsky.social" }
            guard let feedService = URL(string: text.contains("://") ? text : "https://\(text)"), Origin(feedService) == Origin(service),
                  case .string(let name)? = posts["identifier"] else { return false }
            let normalized = { (name: String) in (name.hasPrefix("@") ? String(name.dropFirst()) : name).lowercased() }
            return normalized(name) == normalized(identifier)
        }
    }
}
