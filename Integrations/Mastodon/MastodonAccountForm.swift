import Core
import Foundation

/// `feedsync add @user@server`: that account's posts, read with the config's Mastodon login on
/// that server (its token file, variable or value copied into the new feed).
struct MastodonAccountForm: AddForm {
    let summary = "@user@server"
    let label = "Mastodon"
    let noun = "an account"
    let options = [AddOption(CommandOption("--timeline", value: "T", "the timeline instead of the account's posts (home, …)"),
                             appliesTo: "Mastodon accounts")]
    let precedence = AddPrecedence.syntax

    func recognises(_ text: String, _ context: any AddContext) throws -> Bool {
        guard text.hasPrefix("@"), text.dropFirst().contains("@") else { return false }
        _ = try account(text, context)
        return true
    }

    func add(_ text: String, _ context: any AddContext) async throws -> AddedFeeds {
        let (user, server) = try account(text, context)
        let account = "@\(user)@\(server)"
        let login = try context.feeds().map(\.posts).first { posts in
            guard case .string(let integration)? = posts["integration"], integration.lowercased() == MastodonIntegration.name,
                  case .string(let text)? = posts["server"], let url = URL(string: text.contains("://") ? text : "https://\(text)") else { return false }
            return Self.hostAndPort(url) == server
        }
        guard let login, case .string(let serverText)? = login["server"] else {
            throw context.usageError("\(context.configName) has no Mastodon login on \(server) to read \(account) with; run `feedsync login mastodon \(server)` first")
        }
        var posts: [(key: String, value: ConfigValue)] = [("integration", .string(MastodonIntegration.name)), ("server", .string(serverText))]
        posts += ConfigKey.secretSource("accessToken", in: login)
        posts.append(("timeline", .string(context.option("--timeline") ?? "account:@\(user)")))
        let name = context.option("--name") ?? FeedNaming.name(from: "\(user)-\(server)")
        return AddedFeeds(feeds: [NewFeed(name: name, posts: posts)],
                          saying: "added feed \(name) (\(account)'s posts, read with the login on \(server)) to \(context.configName)")
    }

    /// The user and the server (lower case) of `@user@server`.
    private func account(_ text: String, _ context: any AddContext) throws -> (user: String, server: String) {
        let parts = text.dropFirst().split(separator: "@", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
              parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-") }),
              parts[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":") }) else {
            throw context.usageError("\"\(Terminal.safe(text, limit: 200))\" is not a Mastodon account; write @user@server")
        }
        return (parts[0], parts[1].lowercased())
    }

    /// `host` or `host:port` as a person writes a server, lower case.
    static func hostAndPort(_ url: URL) -> String {
        let host = (url.host ?? "").lowercased()
        guard let port = url.port, !(url.scheme == "https" && port == 443), !(url.scheme == "http" && port == 80) else { return host }
        return "\(host):\(port)"
    }
}
