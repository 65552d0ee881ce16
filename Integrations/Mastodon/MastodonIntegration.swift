import Core
import Foundation
import IntegrationKit

/// The `"mastodon"` integration: a timeline of a Mastodon-compatible server.
///
///     {"integration": "mastodon", "server": "https://example.social", "accessTokenEnv": "MASTODON_TOKEN",
///      "timeline": "home", "pageSize": 40, "maxPosts": 2000, "since": "2026-01-01", "stream": true}
///
/// It serves posts; their videos come with the statuses, on the same pages. With `"stream": true`
/// the daemon also follows the timeline live (``MastodonLiveSource``); `streamingURL` names a
/// streaming server the token may go to, `streamIdleSeconds` how long it may stay silent.
public enum MastodonIntegration {
    public static func makeBackend(_ config: ConfigSection, context: IntegrationContext) throws -> FeedBackend {
        let server = try config.require(config.serverURL(
            "server", insecureHint: "Mastodon servers are reached over https (http is for loopback test servers only)"), "server")
        let token = try config.secret("accessToken")
        // Empty only as the placeholder of a secret `config check` defers (a real one is never
        // empty): its absence is reported as such, not as a bad token.
        guard token.revealed.isEmpty || HeaderValue.isValid(token.revealed) else {
            throw config.error("accessToken", "the token holds a space, a control character or a byte outside visible ASCII, which an Authorization header cannot carry")
        }
        let tokenSource = try config.nonEmptyString("accessTokenEnv").map { "$\($0)" } ?? config.path("accessTokenFile")?.path ?? ""
        let timelineText = try config.require(config.nonEmptyString("timeline"), "timeline")
        guard let timeline = MastodonTimeline(timelineText) else {
            throw config.error("timeline", "\"\(timelineText)\" is not a timeline; use home, list:<id>, account:<id or @acct>, bookmarks, favourites, hashtag:<tag>, public or public:local")
        }
        let pageSize = try config.int("pageSize", in: 1...40) ?? 40
        let maxPosts = try config.int("maxPosts", in: 1...10_000_000)
        var since: Date?
        if let text = try config.nonEmptyString("since") {
            since = RFC3339.date(from: text) ?? RFC3339.date(from: text + "T00:00:00Z")
            guard since != nil else { throw config.error("since", "\"\(text)\" is not a date; write 2026-01-31 or 2026-01-31T12:00:00Z") }
        }
        let limits = try HTTPLimits(config)
        let live = try config.bool("stream") ?? false
        var streamingURL: URL?
        if let text = try config.nonEmptyString("streamingURL") {
            guard let url = MastodonStream.httpForm(text) else {
                throw config.error("streamingURL", "\"\(Terminal.safe(text, limit: 200))\" is not a wss://, ws://, https:// or http:// URL")
            }
            guard url.scheme == "https" || ConfigSection.isLoopback(url.host ?? "") else {
                throw config.error("streamingURL", "\"\(url.absoluteString)\" is plain ws/http to a host that is not loopback; the token would travel in clear")
            }
            streamingURL = url
        }
        let streamLimits = try EventStreamLimits(config)
        let stream = MastodonStream(timeline)
        if live && stream == nil {
            config.context.warnings.add("\(config.context.fileName): \(config.keyPath("stream")): the \(timelineText) timeline has no stream "
                                        + "on Mastodon; the feed is polled")
        }
        try config.finish(alsoKnown: ["integration"])

        let transport = CurlTransport.shared(limits, in: context.shared)
        let client = MastodonClient(server: server, token: token, transport: transport,
                                    requests: context.requests, gate: context.hosts,
                                    // Mastodon counts a quota per access token (its account); the token's hash
                                    // tells tokens apart without keeping its text in another place.
                                    pacer: RateLimitPacer.shared(for: server, account: "token \(token.hashValue)", in: context.shared,
                                                                 log: context.log),
                                    waiter: context.waiter)
        return FeedBackend(
            posts: MastodonPostService(client: client, timeline: timeline, pageSize: pageSize, maxPosts: maxPosts, since: since,
                                       accounts: AccountLookup(client: client)),
            authentication: MastodonAuthenticationService(client: client, token: token),
            live: live ? stream.map { MastodonLiveSource(client: client, stream: $0, streamingURL: streamingURL, token: token,
                                                          transport: transport, limits: streamLimits) } : nil,
            lifecycle: MastodonManager(client: client),
            identity: "mastodon \(server.absoluteString) timeline \(timelineText)",
            // The token is the account; the key names where it comes from, never the token.
            account: AccountKey(integration: name, server: server.absoluteString, account: "token from \(tokenSource)"))
    }

}
