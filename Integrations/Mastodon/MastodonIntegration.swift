import Core
import Foundation
import IntegrationKit

/// The `"mastodon"` integration: a timeline of a Mastodon-compatible server.
///
///     {"integration": "mastodon", "server": "https://example.social", "accessTokenEnv": "MASTODON_TOKEN",
///      "timeline": "home", "pageSize": 40, "maxPosts": 2000, "since": "2026-01-01"}
///
/// It serves posts; their videos come with the statuses, on the same pages.
public enum MastodonIntegration: PostsIntegration {
    public static func makeBackend(_ config: ConfigSection, context: IntegrationContext) throws -> FeedBackend {
        let server = try config.require(config.serverURL(
            "server", insecureHint: "Mastodon servers are reached over https (http is for loopback test servers only)"), "server")
        let token = try config.secret("accessToken")
        guard HeaderValue.isValid(token.revealed) else {
            throw config.error("accessToken", "the token holds a space, a control character or a byte outside visible ASCII, which an Authorization header cannot carry")
        }
        let timelineText = try config.require(config.nonEmptyString("timeline"), "timeline")
        guard let timeline = MastodonTimeline(timelineText) else {
            throw config.error("timeline", "\"\(timelineText)\" is not a timeline; use home, list:<id>, account:<id or @acct>, bookmarks, favourites or hashtag:<tag>")
        }
        let pageSize = try config.int("pageSize", in: 1...40) ?? 40
        let maxPosts = try config.int("maxPosts", in: 1...10_000_000)
        var since: Date?
        if let text = try config.nonEmptyString("since") {
            since = RFC3339.date(from: text) ?? RFC3339.date(from: text + "T00:00:00Z")
            guard since != nil else { throw config.error("since", "\"\(text)\" is not a date; write 2026-01-31 or 2026-01-31T12:00:00Z") }
        }
        let limits = try HTTPLimits(config)
        try config.finish(alsoKnown: ["integration"])

        let client = MastodonClient(server: server, token: token, transport: CurlTransport.shared(limits, in: context.shared),
                                    requests: context.requests, gate: context.hosts,
                                    // Mastodon counts a quota per access token (its account); the token's hash
                                    // tells tokens apart without keeping its text in another place.
                                    pacer: RateLimitPacer.shared(for: server, account: "token \(token.hashValue)", in: context.shared,
                                                                 notice: context.notice),
                                    waiter: context.waiter)
        return FeedBackend(
            posts: MastodonPostService(client: client, timeline: timeline, pageSize: pageSize, maxPosts: maxPosts, since: since,
                                       accounts: AccountLookup(client: client)),
            authentication: MastodonAuthenticationService(client: client, token: token),
            lifecycle: MastodonManager(client: client),
            identity: "mastodon \(server.absoluteString) timeline \(timelineText)")
    }

}
