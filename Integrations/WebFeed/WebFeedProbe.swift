import Core
import Foundation
import IntegrationKit

/// One look at an address a person pasted, for `feedsync add`: is it a feed (and what is it
/// called), or a page that may name its feeds?
///
///     switch try await WebFeedProbe.look(at: url, userAgent: "feedsync/1.0") {
///     case .feed(let url, let title): …
///     case .page(let url, let feedLinks): …
///     }
///
/// The request is the one a pull makes (the same client, redirects and limits), and a page's
/// feed links are found by the discovery a pull uses (``FeedDiscovery``), so what is found here
/// is what the feed's first pull reads.
public enum WebFeedProbe {
    /// What the address answered.
    public enum Answer: Sendable, Equatable {
        /// A feed: where it lives (after permanent redirects) and its title, if it has one.
        case feed(url: URL, title: String?)
        /// An HTML page: the URL it came from, and the feeds its `<link rel="alternate">` tags
        /// name, first first, resolved against its `<base href>` or its URL (none when it names none).
        case page(url: URL, feedLinks: [URL])
    }

    /// The limits of one look: a page is small, and a person is waiting.
    public static let limits = HTTPLimits(idleTimeout: 15, deadline: 30, maxBodyBytes: 4 << 20, maxRedirects: 5)

    /// Fetches `url` once and tells a feed from a page.
    ///
    /// - Parameters:
    ///   - gate: where requests to one host take turns, shared by the looks of one `add`.
    ///   - budget: the requests each host may still be sent (each redirect hop is one), shared
    ///     likewise; `nil` for no bound beyond ``limits``.
    /// - Throws: ``Core/ServiceError``: `.notFound` for 404 or 410, `.unavailable` for another
    ///   status or a failed request, `.invalidResponse` when the body is neither a feed nor HTML;
    ///   ``DiscoveryBudget/Spent`` when a request would pass the budget.
    public static func look(at url: URL, userAgent: String, gate: HostGate = HostGate(), budget: DiscoveryBudget? = nil) async throws -> Answer {
        try await look(at: url, userAgent: userAgent, gate: gate, budget: budget, auth: nil)
    }

    /// ``look(at:userAgent:gate:budget:)`` with a private feed's credentials, sent only to
    /// `home` (the origin they were given for), never across a redirect or a link to another.
    static func look(at url: URL, userAgent: String, gate: HostGate, budget: DiscoveryBudget?,
                     auth: (credentials: WebFeedAuth, home: Origin)?) async throws -> Answer {
        let curl = CurlTransport(limits: limits)
        let transport: any HTTPTransport = budget.map { BudgetedTransport(base: curl, budget: $0) } ?? curl
        let headers = WebFeedHeaders(home: auth?.home, userAgent: userAgent, auth: auth?.credentials)
        let client = WebFeedClient(transport: transport, requests: RequestCounter(), gate: gate, headers: headers,
                                   maxRedirects: limits.maxRedirects)
        let shown = Terminal.safe(url.absoluteString, limit: 200)
        let operation = "reading \(shown)"
        let fetched: WebFeedClient.Fetched
        do {
            fetched = try await client.get(url, etag: nil, lastModified: nil)
            await transport.close()
        } catch {
            await transport.close()
            throw error
        }
        let status = fetched.response.status
        guard status == 200 else {
            throw ServiceError([404, 410].contains(status) ? .notFound : .unavailable, operation, "the server answered HTTP \(status)")
        }
        let body = fetched.response.body
        if let document = try? WebFeedParser.parse(body, feedURL: fetched.url) {
            let title = document.title.map { Terminal.safe($0, limit: 200) }.flatMap { $0.isEmpty ? nil : $0 }
            return .feed(url: fetched.permanentURL, title: title)
        }
        let type = fetched.response.header("Content-Type")?.lowercased() ?? ""
        guard FeedDiscovery.isHTML(body, contentType: type) || type.hasPrefix("application/xhtml") else {
            throw ServiceError(.invalidResponse, operation, "it is neither a feed (RSS, Atom or JSON Feed) nor an HTML page")
        }
        return .page(url: fetched.url, feedLinks: FeedDiscovery.feedLinks(in: body, pageURL: fetched.url))
    }
}
