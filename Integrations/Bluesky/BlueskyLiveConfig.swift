import Core
import Foundation
import IntegrationKit

/// A Bluesky feed's live settings: `stream` (default false), `jetstreamURL` (default
/// ``defaultURL``; `ws://` only to a loopback host or with `"jetstreamPlaintext": true`),
/// `subscriptionRefreshSeconds` (how often the follow set is read again, 10–86400, default the
/// feed's `interval`, within those bounds)
/// and `streamIdleSeconds` (5–3600, default 60).
struct BlueskyLiveConfig {
    static let defaultURL = URL(string: "wss://jetstream2.us-east.bsky.network/subscribe")!

    var subscription: BlueskySubscription
    var url: URL
    var refreshInterval: TimeInterval
    var limits: WebSocketLimits

    /// `nil` when the feed does not stream (or its timeline has no stream: a warning says so).
    /// The bounds of the follow set's refresh, in seconds.
    static let refreshRange = 10...86_400

    init?(_ config: ConfigSection, timeline: BlueskyTimeline, timelineText: String, interval: TimeInterval?) throws {
        let stream = try config.bool("stream") ?? false
        let text = try config.nonEmptyString("jetstreamURL")
        let plaintext = try config.bool("jetstreamPlaintext") ?? false
        let every = interval.map { Int(min(max($0.rounded(), Double(Self.refreshRange.lowerBound)), Double(Self.refreshRange.upperBound))) }
        let refresh = try config.int("subscriptionRefreshSeconds", in: Self.refreshRange) ?? every ?? 900
        let idle = try config.int("streamIdleSeconds", in: 5...3600) ?? 60
        var url = Self.defaultURL
        if let text {
            guard let parsed = URLComponents(string: text), let scheme = parsed.scheme?.lowercased(), scheme == "wss" || scheme == "ws",
                  let host = parsed.host, !host.isEmpty, parsed.user == nil, parsed.password == nil, let built = parsed.url else {
                throw config.error("jetstreamURL", "\"\(Terminal.safe(text, limit: 200))\" is not a wss:// URL with a host")
            }
            guard scheme == "wss" || ConfigSection.isLoopback(host) || plaintext else {
                throw config.error("jetstreamURL", "\"\(Terminal.safe(text, limit: 200))\" is plain ws:// to a host that is not loopback; "
                                   + "use wss://, or set \"jetstreamPlaintext\": true to accept it")
            }
            url = built
        }
        guard stream else { return nil }
        guard let subscription = BlueskySubscription(timeline) else {
            config.context.warnings.add("\(config.context.fileName): \(config.keyPath("stream")): the \(timelineText) timeline has no stream "
                                        + "on Jetstream (only home, author: and list: do); the feed is polled")
            return nil
        }
        self.subscription = subscription
        self.url = url
        refreshInterval = TimeInterval(refresh)
        limits = WebSocketLimits(idleTimeout: TimeInterval(idle))
    }

    func source(client: BlueskyClient, identifier: String, password: Secret, transport: CurlTransport, shared: SharedResources,
                log: Logger) -> BlueskyLiveSource {
        let accountKey = ConnectionDigest.of("\(client.service.absoluteString) \(identifier) \(password.revealed)")
        let authentication = BlueskyAuthenticationService(client: client, identifier: identifier, password: password)
        // One session per account for every live feed of the process, and one position per connection.
        let session = shared.value(for: "bluesky live session \(accountKey)") { BlueskyLiveSession(authentication) }
        let connection = "\(url.absoluteString) \(accountKey) \(subscription)"
        let position = shared.value(for: "bluesky live position \(connection)") { JetstreamPosition() }
        let accounts = shared.value(for: "bluesky live accounts \(connection)") { BlueskyAccountStates() }
        return BlueskyLiveSource(client: client, session: session, identifier: identifier, subscription: subscription, jetstreamURL: url,
                                 transport: transport, limits: limits, refreshInterval: refreshInterval, position: position,
                                 accounts: accounts, accountKey: accountKey, log: log)
    }
}
