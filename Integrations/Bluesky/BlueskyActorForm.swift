import Core
import Foundation

/// `feedsync add HANDLE` (`@alice.example.com`, `alice.bsky.social`) or `feedsync add did:…`:
/// that account's posts, read as the config's Bluesky login.
struct BlueskyActorForm: AddForm {
    let summary = "a Bluesky handle"
    let label = "Bluesky"
    let noun = "an account"
    let options = [AddOption(CommandOption("--timeline", value: "T", "the timeline instead of the account's posts (home, …)"),
                             appliesTo: "Bluesky accounts")]
    let precedence = AddPrecedence.syntax

    func recognises(_ text: String, _ context: any AddContext) throws -> Bool {
        try actor(text, context) != nil
    }

    func add(_ text: String, _ context: any AddContext) async throws -> AddedFeeds {
        guard let actor = try actor(text, context) else { throw context.usageError("\"\(Terminal.safe(text, limit: 200))\" is not a Bluesky handle") }
        let login = try context.feeds().map(\.posts).first { posts in
            guard case .string(let integration)? = posts["integration"] else { return false }
            return integration.lowercased() == BlueskyIntegration.name
        }
        guard let login, case .string(let identifier)? = login["identifier"] else {
            throw context.usageError("\(context.configName) has no Bluesky login to read \(actor) with; run `feedsync login bluesky YOUR-HANDLE` first")
        }
        var posts: [(key: String, value: ConfigValue)] = [("integration", .string(BlueskyIntegration.name))]
        if case .string(let service)? = login["service"] { posts.append(("service", .string(service))) }
        posts.append(("identifier", .string(identifier)))
        posts += ConfigKey.secretSource("appPassword", in: login)
        posts.append(("timeline", .string(context.option("--timeline") ?? "author:\(actor)")))
        let name = context.option("--name") ?? FeedNaming.name(from: actor.lowercased())
        return AddedFeeds(feeds: [NewFeed(name: name, posts: posts)],
                          saying: "added feed \(name) (\(actor)'s posts, read as \(Terminal.safe(identifier, limit: 80))) to \(context.configName)")
    }

    /// The actor `text` names (`did:…` as it is, a handle as `@handle` in lower case), or `nil`
    /// when it is not this form's: `did:…`, `@handle`, or a bare `*.bsky.social`.
    private func actor(_ text: String, _ context: any AddContext) throws -> String? {
        let shown = Terminal.safe(text, limit: 200)
        if text.hasPrefix("did:") {
            // did:METHOD:ID, as the AT Protocol writes them (https://atproto.com/specs/did).
            guard text.utf8.count <= 2048, text.range(of: #"^did:[a-z]+:[A-Za-z0-9._:%-]*[A-Za-z0-9._%-]$"#, options: .regularExpression) != nil else {
                throw context.usageError("\"\(shown)\" is not a DID; write did:plc:… or did:web:…")
            }
            return text
        }
        guard text.hasPrefix("@") || (!text.contains("/") && text.lowercased().hasSuffix(".bsky.social")) else { return nil }
        let handle = (text.hasPrefix("@") ? String(text.dropFirst()) : text).lowercased()
        guard !handle.isEmpty, handle.contains("."),
              handle.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
            throw context.usageError("\"\(shown)\" is not a Bluesky handle; write @alice.bsky.social or did:plc:…")
        }
        return "@" + handle
    }
}
