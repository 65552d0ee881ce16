import Core
import Foundation
import IntegrationKit

/// The `"webfeed"` integration: an RSS, Atom or JSON Feed document on the web. No login; a
/// private feed's credentials are config keys (``WebFeedHeaders``, ``WebFeedAuth``).
///
///     {"integration": "webfeed", "url": "https://daringfireball.net/feeds/main"}
///
/// Every web feed of the process with the same limits shares one transport (one connection
/// pool), so descriptors grow with hosts and requests in flight, not with feeds.
public enum WebFeedIntegration {
    public static func makeBackend(_ config: ConfigSection, context: IntegrationContext) throws -> FeedBackend {
        let url = try config.require(config.httpURL("url"), "url")
        let limits = try HTTPLimits(config)
        let headers = try WebFeedHeaders(config, url: url, defaultUserAgent: context.userAgent)
        try config.finish(alsoKnown: ["integration"])
        let transport = CurlTransport.shared(limits, in: context.shared)
        let client = WebFeedClient(transport: transport, requests: context.requests, gate: context.hosts,
                                   headers: headers, maxRedirects: limits.maxRedirects)
        return FeedBackend(
            posts: WebFeedPostService(url: url, client: client, now: { Date() }, notices: NoticeOnce(log: context.log)),
            authentication: nil,
            lifecycle: WebFeedManager(transport: transport, url: url),
            // Not the URL: a feed whose address is edited (or moves) is the same feed, and its
            // items, which a window drops, must not be swept as deleted by a backend swap.
            identity: "webfeed")
    }
}

/// Releases the shared transport's idle connections at teardown; the next request reopens one.
struct WebFeedManager: IntegrationLifecycle {
    let transport: any HTTPTransport
    let url: URL

    var name: String { "web feed \(url.absoluteString)" }

    func setUp() async throws {}

    func tearDown() async { await transport.close() }
}
