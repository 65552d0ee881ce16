import Core
import Foundation
import IntegrationKit

extension WebFeedProbe {
    /// The feed `url` is, or the first feed the page at `url` names (checked to be a feed), with
    /// its title and the other feeds the page names: what `feedsync add URL` adds, and the feed
    /// of an OPML file's site.
    ///
    /// - Parameters:
    ///   - gate, budget: shared by the looks of one `add`, so that its requests to one host take
    ///     turns and stay within its budget (see ``look(at:userAgent:gate:budget:)``).
    /// - Throws: ``ServiceError`` in one sentence: the page names no feed, its link leads to
    ///   another page (or to itself: it is not fetched again), or the address cannot be read;
    ///   ``DiscoveryBudget/Spent`` when the budget stops a request.
    public static func firstFeed(at url: URL, userAgent: String, gate: HostGate = HostGate(), budget: DiscoveryBudget? = nil) async throws
        -> (feed: (url: URL, title: String?), others: [URL]) {
        try await firstFeed(at: url, userAgent: userAgent, gate: gate, budget: budget, auth: nil)
    }

    /// ``firstFeed(at:userAgent:gate:budget:)`` with a private feed's credentials, sent only to
    /// `url`'s origin: a page's link to a feed elsewhere is read without them.
    static func firstFeed(at url: URL, userAgent: String, gate: HostGate = HostGate(), budget: DiscoveryBudget? = nil,
                          auth credentials: WebFeedAuth?) async throws -> (feed: (url: URL, title: String?), others: [URL]) {
        let auth = credentials.flatMap { credentials in Origin(url).map { (credentials, $0) } }
        switch try await look(at: url, userAgent: userAgent, gate: gate, budget: budget, auth: auth) {
        case .feed(let feedURL, let title):
            return ((feedURL, title), [])
        case .page(let pageURL, let links):
            guard let first = links.first else {
                throw ServiceError(.invalidResponse, "finding a feed at \(Terminal.safe(url.absoluteString, limit: 200))",
                                   "the page names no feed (no <link rel=\"alternate\"> of an RSS, Atom or JSON Feed type); add the feed's own address")
            }
            let namesItself = [url, pageURL].contains { NormalizedURL($0) == NormalizedURL(first) }
            guard !namesItself, case .feed(let feedURL, let title) = try await look(at: first, userAgent: userAgent, gate: gate, budget: budget, auth: auth) else {
                throw ServiceError(.invalidResponse, "reading the feed \(Terminal.safe(first.absoluteString, limit: 200)) that \(Terminal.safe(url.absoluteString, limit: 200)) names",
                                   "it is a page, not a feed")
            }
            return ((feedURL, title), Array(links.dropFirst()))
        }
    }
}
