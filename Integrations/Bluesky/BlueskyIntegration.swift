import Core
import Foundation
import IntegrationKit

/// The `"bluesky"` integration: a timeline of the AT Protocol network, read through a PDS
/// with an app password.
///
///     {"integration": "bluesky", "service": "https://bsky.social", "identifier": "me.bsky.social",
///      "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home", "maxPosts": 2000, "since": "2026-01-01"}
///
/// It serves posts; their videos come with them, on the same pages. With `"stream": true` the
/// daemon also follows the timeline live through Jetstream (``BlueskyLiveSource``).
public enum BlueskyIntegration {
    public static func makeBackend(_ config: ConfigSection, context: IntegrationContext) throws -> FeedBackend {
        let service = try config.require(config.serverURL(
            "service", insecureHint: "Bluesky services are reached over https (http is for loopback test servers only)"), "service")
        let identifier = try config.require(config.nonEmptyString("identifier"), "identifier")
        guard identifier.utf8.count <= 512, !identifier.contains(where: { $0.isWhitespace || $0.isNewline }) else {
            throw config.error("identifier", "\"\(Terminal.safe(identifier, limit: 80))\" is not a handle, DID or email address")
        }
        let password = try config.secret("appPassword")
        let timelineText = try config.require(config.nonEmptyString("timeline"), "timeline")
        guard let timeline = BlueskyTimeline(timelineText) else {
            throw config.error("timeline", "\"\(Terminal.safe(timelineText, limit: 80))\" is not a timeline; use home, author:@handle, author:did:…, "
                               + "feed:at://…/app.bsky.feed.generator/…, list:at://…/app.bsky.graph.list/…, likes or search:QUERY")
        }
        let filter = try config.nonEmptyString("filter")
        if let filter {
            guard case .author = timeline else { throw config.error("filter", "filter applies to author: timelines only") }
            guard BlueskyTimeline.authorFilters.contains(filter) else {
                throw config.error("filter", "\"\(Terminal.safe(filter, limit: 80))\" is not a filter; use \(BlueskyTimeline.authorFilters.joined(separator: ", "))")
            }
        }
        let pageSize = try config.int("pageSize", in: 1...100) ?? 100
        let maxPosts = try config.int("maxPosts", in: 1...10_000_000)
        var since: Date?
        if let text = try config.nonEmptyString("since") {
            since = RFC3339.date(from: text) ?? RFC3339.date(from: text + "T00:00:00Z")
            guard since != nil else { throw config.error("since", "\"\(Terminal.safe(text, limit: 80))\" is not a date; write 2026-01-31 or 2026-01-31T12:00:00Z") }
        }
        let limits = try HTTPLimits(config)
        let live = try BlueskyLiveConfig(config, timeline: timeline, timelineText: timelineText, interval: context.interval)
        try config.finish(alsoKnown: ["integration"])

        let transport = CurlTransport.shared(limits, in: context.shared)
        let client = BlueskyClient(service: service, transport: transport, requests: context.requests,
                                   gate: context.hosts,
                                   pacer: RateLimitPacer.shared(for: service, account: "\(identifier) reads", in: context.shared,
                                                                log: context.log),
                                   sessionPacer: RateLimitPacer.shared(for: service, account: "\(identifier) sessions", in: context.shared,
                                                                       log: context.log),
                                   waiter: context.waiter)
        return FeedBackend(
            posts: BlueskyPostService(client: client, timeline: timeline, filter: filter, identifier: identifier,
                                      pageSize: pageSize, maxPosts: maxPosts, since: since),
            authentication: BlueskyAuthenticationService(client: client, identifier: identifier, password: password),
            live: live?.source(client: client, identifier: identifier, password: password, transport: transport, shared: context.shared,
                               log: context.log),
            lifecycle: BlueskyManager(client: client),
            identity: "bluesky \(service.absoluteString) as \(identifier) timeline \(timelineText)" + (filter.map { " filter \($0)" } ?? ""),
            // Every timeline read as one person shares a session: a PDS allows about 30 logins
            // per account in 5 minutes, so 40 feeds logging in each would lock the account out.
            account: AccountKey(integration: name, server: service.absoluteString, account: identifier))
    }
}
