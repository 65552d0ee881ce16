import Core
import Foundation
import Sync

/// One entry of the config's `"webhooks"`: where to POST which events of which feeds.
///
///     {"url": "https://hooks.example/feedsync", "secretFile": "secrets/hook",
///      "events": ["new", "deleted"], "feeds": ["blog"], "rules": [{"block": {"kind": "reply"}}]}
public struct WebhookTarget: Sendable {
    /// What a delivery tells.
    public enum Event: String, Sendable, CaseIterable {
        case new, updated, deleted
    }

    public var url: URL
    /// Signs each delivery (HMAC-SHA256).
    public var secret: Secret
    public var events: Set<Event>
    /// The feeds it tells of; empty: every feed.
    public var feeds: Set<String>
    /// Which new and updated posts it tells of (the same rules as a feed's; a post they block is
    /// not sent). Deletions are told whatever the rules.
    public var rules: PostRules

    /// Whether it tells of `feed`.
    public func covers(_ feed: String) -> Bool { feeds.isEmpty || feeds.contains(feed) }
}

extension Config {
    /// The most webhooks a config may list.
    static let maxWebhooks = 50

    /// Reads `"webhooks"`.
    ///
    /// - Throws: ``Core/ConfigError`` with the key path: a URL that is not http(s), or that
    ///   points at this daemon's own listener (`metrics.listen`); two entries with one URL; an
    ///   unknown event or feed; a bad rule; a missing secret.
    static func webhooks(in root: ConfigSection, feeds: [String], listener: ListenAddress?) throws -> [WebhookTarget] {
        guard let entries = try root.sections("webhooks") else { return [] }
        guard entries.count <= maxWebhooks else { throw root.error("webhooks", "lists \(entries.count) webhooks; at most \(maxWebhooks) are read") }
        var urls = Set<String>()
        return try entries.map { entry in
            let url = try entry.require(entry.httpURL("url"), "url")
            if let listener, Self.isListener(url, listener) {
                throw entry.error("url", "points at feedsyncd's own listener (metrics.listen \(listener)); a webhook must go to another server")
            }
            guard urls.insert(url.absoluteString).inserted else { throw entry.error("url", "is the url of another webhook too") }
            let secret = try entry.secret("secret")
            let events = try (entry.stringList("events") ?? WebhookTarget.Event.allCases.map(\.rawValue)).map { name in
                guard let event = WebhookTarget.Event(rawValue: name) else {
                    throw entry.error("events", "\"\(Terminal.safe(name, limit: 40))\" is not new, updated or deleted")
                }
                return event
            }
            guard !events.isEmpty else { throw entry.error("events", "lists no event") }
            let named = try entry.stringList("feeds") ?? []
            if let unknown = named.first(where: { !feeds.contains($0) }) {
                throw entry.error("feeds", "\"\(Terminal.safe(unknown, limit: 80))\" names no feed of the config")
            }
            let rules = try compiledRules(Self.rules(in: entry), [], file: root.context.fileName)
            try entry.finish()
            return WebhookTarget(url: url, secret: secret, events: Set(events), feeds: Set(named), rules: rules)
        }
    }

    /// Whether `url` is the listener's address: its port, and its host or any loopback name
    /// for a loopback or wildcard listener.
    private static func isListener(_ url: URL, _ listener: ListenAddress) -> Bool {
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        guard port == Int(listener.port), let host = url.host?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")) else { return false }
        let listening = listener.host.lowercased()
        if host == listening { return true }
        let wildcard = listening == "0.0.0.0" || listening == "::"
        return (wildcard || ConfigSection.isLoopback(listening)) && (ConfigSection.isLoopback(host) || (wildcard && host == "0.0.0.0"))
    }
}
