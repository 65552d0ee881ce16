import App
import Core
import Foundation
import IntegrationKit

/// `feedsync serve-user token NAME FEED`: a token that opens one served feed in its URL
/// (`/feeds/FEED.atom?token=…`), for readers that cannot send a password. Printed once; the
/// store keeps only its SHA-256, as it does a login's token.
enum ServeUserTokenCommand: Command {
    static let words = ["serve-user", "token"]
    static let summary = "Make a token that opens one served feed in its URL, for readers that cannot send a password."
    static let synopsis = "serve-user token NAME FEED [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    /// How long a feed token is valid: it is revoked with `serve-user revoke` or `remove`.
    static let lifetime: TimeInterval = 10 * 365 * 86_400

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        let (name, feed) = try ServedFeedName.pair(options, usage: usage)
        let token = PasswordHash.randomToken()
        try await withRuntime(options, localOnly) { runtime in
            try ServedFeedName.check(feed, runtime: runtime, usage: usage)
            let now = Date()
            try await runtime.store.saveFeedToken(digest: PasswordHash.digest(ofToken: token.revealed), of: name, feed: feed, at: now,
                                                  expiresAt: now.addingTimeInterval(lifetime))
        }
        // The token goes to standard output once, for the person who asked: past the redaction
        // every other line passes (it is registered as a secret), never to a log or the store.
        // It is 64 hex digits and the path is percent-encoded, so nothing here needs Terminal.safe.
        let path = ServedFeedName.path(feed)
        try output.write(Array("/feeds/\(path).atom?token=\(token.revealed)\n/feeds/\(path).json?token=\(token.revealed)\n".utf8))
        return .ok
    }
}

/// `feedsync serve-user revoke NAME FEED`: every feed token of NAME for FEED stops working.
enum ServeUserRevokeCommand: Command {
    static let words = ["serve-user", "revoke"]
    static let summary = "Revoke the tokens an account has for one served feed."
    static let synopsis = "serve-user revoke NAME FEED [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        let (name, feed) = try ServedFeedName.pair(options, usage: usage)
        let removed = try await withRuntime(options, localOnly) { try await $0.store.removeFeedTokens(of: name, feed: feed) }
        guard removed > 0 else {
            throw ServiceError(.notFound, "revoking the feed tokens of \(name)",
                               "\(name) has no token for \(Terminal.safe(feed, limit: 80)); `feedsync serve-user list` lists them")
        }
        try output.line("\(removed) token\(removed == 1 ? "" : "s") of \(name) for \(Terminal.safe(feed, limit: 80)) revoked")
        return .ok
    }
}

/// The FEED a feed token opens: a served feed's name, `all`, `group/GROUP` or `search/NAME`, as
/// its path under `/feeds/` without the extension.
enum ServedFeedName {
    static func pair(_ options: CommandLineOptions, usage: String) throws -> (name: String, feed: String) {
        guard options.positionals.count == 2 else { throw UsageError("give an account NAME and a FEED", usage: usage) }
        let name = try ServeUserName.checked(options.positionals[0], usage: usage), feed = options.positionals[1]
        guard !feed.isEmpty, feed.utf8.count <= 200, !feed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw UsageError("the FEED \"\(Terminal.safe(feed, limit: 80))\" is not a served feed's name", usage: usage)
        }
        return (name, feed)
    }

    /// Refuses a FEED the config does not serve.
    static func check(_ feed: String, runtime: Runtime, usage: String) throws {
        let served = runtime.servedFeeds
        let known = served.contains { $0.name == feed } || feed == "all"
            || (feed.hasPrefix("group/") && served.contains { $0.group == String(feed.dropFirst(6)) })
            || (feed.hasPrefix("search/") && runtime.searches[String(feed.dropFirst(7))] != nil)
        guard known else {
            throw UsageError("\"\(Terminal.safe(feed, limit: 80))\" is not served: give a feed's name, all, group/GROUP or search/NAME",
                             usage: usage)
        }
    }

    /// The feed as a URL path: each part percent-encoded, the `/` after `group` or `search` kept.
    static func path(_ feed: String) -> String {
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))
        let encode = { (part: Substring) in part.addingPercentEncoding(withAllowedCharacters: allowed) ?? String(part) }
        if feed.hasPrefix("group/") || feed.hasPrefix("search/"), let slash = feed.firstIndex(of: "/") {
            return String(feed[..<slash]) + "/" + encode(feed[feed.index(after: slash)...])
        }
        return encode(feed[...])
    }
}
