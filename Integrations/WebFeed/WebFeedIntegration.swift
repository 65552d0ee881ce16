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
        let address = WebFeedAddress(url)
        let notices = NoticeOnce(log: context.log)
        // A backend keeps nothing between syncs (the cursor holds the validators and a moved
        // URL), so a daemon keeps this recipe and builds the backend for each sync.
        let rebuild = FeedRebuild(sharedKey: "webfeed \(limits)", shared: WebFeedManager(transport: transport, name: "web feeds' connections")) {
            backend(url: address.url, headers: headers, limits: limits, transport: transport, notices: notices, context: $0)
        }
        var built = backend(url: url, headers: headers, limits: limits, transport: transport, notices: notices, context: context)
        built.rebuild = rebuild
        return built
    }

    private static func backend(url: URL, headers: WebFeedHeaders, limits: HTTPLimits, transport: CurlTransport, notices: NoticeOnce,
                                context: IntegrationContext) -> FeedBackend {
        let client = WebFeedClient(transport: transport, requests: context.requests, gate: context.hosts,
                                   headers: headers, maxRedirects: limits.maxRedirects)
        return FeedBackend(
            posts: WebFeedPostService(url: url, client: client, now: { Date() }, notices: notices),
            authentication: nil,
            lifecycle: WebFeedManager(transport: transport, name: "web feed \(url.absoluteString)"),
            // Not the URL: a feed whose address is edited (or moves) is the same feed, and its
            // items, which a window drops, must not be swept as deleted by a backend swap.
            identity: "webfeed")
    }
}

/// Releases the shared transport's idle connections at teardown; the next request reopens one.
struct WebFeedManager: IntegrationLifecycle {
    let transport: any HTTPTransport
    let name: String

    func setUp() async throws {}

    func tearDown() async { await transport.close() }
}

/// A feed's configured URL as a daemon keeps it between syncs: its text, about a third of a
/// parsed `URL`'s bytes, whenever the text parses back to the same URL.
enum WebFeedAddress: Sendable {
    case text(String)
    case parsed(URL)

    init(_ url: URL) {
        let text = url.absoluteString
        self = URL(string: text) == url ? .text(text) : .parsed(url)
    }

    var url: URL {
        switch self {
        // The text parsed to this URL when it was kept, and parsing is a pure function of it.
        case .text(let text): URL(string: text)!
        case .parsed(let url): url
        }
    }
}
