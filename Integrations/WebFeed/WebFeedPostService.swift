import Core
import Foundation
import IntegrationKit

/// Polls one web feed: one conditional GET per sync, the whole document as one page.
///
/// - An unchanged feed (304) is an empty page that ends where it started: nothing is written.
/// - Items are upserted by their identity; an item whose content changed is updated. Items
///   that fall out of the feed's window are not deletions (`missingMeansDeleted` is false).
/// - `Cache-Control: max-age` and `Retry-After` become ``Core/PollingHint/notBefore``; a 301 or
///   308 moves the polled URL; a 410 stops polling until the configured URL changes.
struct WebFeedPostService: PostService {
    let url: URL
    let client: WebFeedClient
    let now: @Sendable () -> Date
    /// Told what reading a document took (a fallback encoding, a recovery), once per kind.
    var notices = NoticeOnce(log: .disabled)

    func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage {
        var state = WebFeedCursor(cursor, configured: url)
        if let gone = state.gone {
            // No request: the server said the feed is gone for good. A config change starts afresh.
            return FeedPage(changes: [], nextCursor: state.feedCursor, hasMore: false, missingMeansDeleted: false,
                            polling: PollingHint(location: location(state), discoveredFrom: discoveredFrom(state), stopped: gone))
        }
        let polled = URL(string: state.url) ?? url
        let operation = "reading the feed at \(Terminal.safe(polled.absoluteString, limit: 200))"
        let first: WebFeedClient.Fetched
        do {
            first = try await client.get(polled, etag: state.etag, lastModified: state.lastModified)
        } catch let error as ServiceError {
            throw ServiceError(error.code, operation, error.reason)
        }
        let (fetched, page) = try await discovered(first, operation: operation)
        let response = fetched.response
        let movedFrom = state.url
        state.url = fetched.permanentURL.absoluteString
        if let page { state.discoveredFrom = page.absoluteString }
        if state.url != movedFrom {
            // Validators were the old URL's.
            (state.etag, state.lastModified) = (nil, nil)
        }
        let now = now()
        switch response.status {
        case 304:
            if let etag = response.header("ETag") { state.etag = Self.validator(etag, limit: 1_000) }
            return FeedPage(changes: [], nextCursor: state.feedCursor, hasMore: false, missingMeansDeleted: false,
                            polling: hint(response, state, now: now))
        case 410:
            state.gone = "the server answered 410 Gone for \(Terminal.safe(fetched.url.absoluteString, limit: 200)): the feed was removed; "
                + "polling stopped until its url in the config changes"
            return FeedPage(changes: [], nextCursor: state.feedCursor, hasMore: false, missingMeansDeleted: false,
                            polling: PollingHint(location: location(state), discoveredFrom: discoveredFrom(state), stopped: state.gone))
        case 429, 503:
            let until = RateLimitPacer.retryDate(for: response, now: now)
            if let until { throw ServiceError(.rateLimited(until: until), operation, "the server answered \(response.status) and asks to wait") }
            throw ServiceError(.unavailable, operation, "the server answered \(response.status)")
        case 200..<300:
            break
        case 401, 403:
            // One sentence, and no retry: the same credentials would be refused again.
            let reason: String
            if client.headers.auth == nil {
                reason = "the feed is private; give its credentials with \"auth\" in the feed's posts section"
            } else if client.headers.fields(for: fetched.url)["Authorization"] == nil {
                reason = "the request went to \(Origin(fetched.url)?.description ?? "another server"), another origin than the feed's, "
                    + "where its credentials are not sent; set the feed's url to where it lives"
            } else {
                reason = "it refused the credentials of \"auth\"; check the user, password or token it names"
            }
            throw ServiceError(.unauthorized, operation, "the server answered \(response.status): \(reason)")
        default:
            throw HTTPStatus.error(for: response, operation) ?? ServiceError(.contractViolation, operation, "the server answered \(response.status)")
        }

        let document: WebFeedDocument
        do {
            document = try WebFeedParser.parse(response.body, feedURL: fetched.url, contentType: response.header("Content-Type"))
        } catch let error as WebFeedParseError {
            // A retry would read the same bytes: this is not transient.
            throw ServiceError(.contractViolation, operation, error.description)
        }
        for note in document.notes { notices.say("the feed at \(Terminal.safe(fetched.url.absoluteString, limit: 200)): \(note)") }
        state.etag = response.header("ETag").flatMap { Self.validator($0, limit: 1_000) }
        state.lastModified = response.header("Last-Modified").flatMap { Self.validator($0, limit: 200) }
        let mapped = WebFeedMapping.changes(document, firstSeen: state.firstSeen, now: now)
        state.firstSeen = mapped.firstSeen
        return FeedPage(changes: mapped.posts.map(FeedChange.upsert), skipped: mapped.skipped, nextCursor: state.feedCursor,
                        hasMore: false, missingMeansDeleted: false, videos: mapped.videos, polling: hint(response, state, now: now))
    }

    /// The feed an HTML page names, when the URL answered with one (a site's address pasted
    /// for its feed's): its first `<link rel="alternate">` of a feed type, fetched in its place
    /// and remembered as a permanent move, so later polls go to the feed itself.
    ///
    /// - Throws: ``Core/ServiceError`` `.contractViolation` when the page names no feed, or the
    ///   link leads to another page.
    ///
    /// - Returns: what to read as the feed, and the page it was found on when it was.
    private func discovered(_ fetched: WebFeedClient.Fetched, operation: String) async throws -> (WebFeedClient.Fetched, page: URL?) {
        let contentType = fetched.response.header("Content-Type")
        guard (200..<300).contains(fetched.response.status), FeedDiscovery.isHTML(fetched.response.body, contentType: contentType) else {
            return (fetched, nil)
        }
        let page = Terminal.safe(fetched.url.absoluteString, limit: 200)
        guard let link = FeedDiscovery.feedLinks(in: fetched.response.body, pageURL: fetched.url).first else {
            throw ServiceError(.contractViolation, operation, "\(page) is an HTML page that names no feed "
                               + "(no <link rel=\"alternate\"> of type RSS, Atom or JSON Feed); set the feed's own URL")
        }
        let feed: WebFeedClient.Fetched
        do {
            feed = try await client.get(link, etag: nil, lastModified: nil)
        } catch let error as ServiceError {
            throw ServiceError(error.code, operation, "the feed \(page) names, \(Terminal.safe(link.absoluteString, limit: 200)): \(error.reason)")
        }
        if (200..<300).contains(feed.response.status), FeedDiscovery.isHTML(feed.response.body, contentType: feed.response.header("Content-Type")) {
            throw ServiceError(.contractViolation, operation, "the feed link on \(page) leads to another HTML page, "
                               + "\(Terminal.safe(feed.url.absoluteString, limit: 200)); set the feed's own URL")
        }
        notices.say("the feed at \(page) is an HTML page; using the feed it names, \(Terminal.safe(feed.permanentURL.absoluteString, limit: 200))")
        // Like a 301: the page's validators were the page's, and the feed is polled from now on.
        return (WebFeedClient.Fetched(response: feed.response, url: feed.url, permanentURL: feed.permanentURL), fetched.url)
    }

    /// The moved URL, when it differs from the configured one.
    private func location(_ state: WebFeedCursor) -> String? {
        state.url == state.configured ? nil : state.url
    }

    /// The page the polled feed was found on, when there is a location and it came from one.
    private func discoveredFrom(_ state: WebFeedCursor) -> String? {
        location(state) == nil ? nil : state.discoveredFrom
    }

    /// `Cache-Control: max-age` (or `Expires`) and `Retry-After` as the earliest next poll.
    private func hint(_ response: HTTPResponse, _ state: WebFeedCursor, now: Date) -> PollingHint {
        var notBefore: Date?
        if let control = response.header("Cache-Control")?.lowercased() {
            for directive in control.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2, parts[0] == "max-age", let seconds = Int(parts[1].trimmingCharacters(in: ["\""])), seconds > 0 {
                    // A day at most: a misconfigured server must not silence a feed for a year.
                    notBefore = now.addingTimeInterval(TimeInterval(min(seconds, 86_400)))
                }
            }
        }
        if let retry = response.header("Retry-After").flatMap({ HTTPDate.retryAfter($0, now: now) }) {
            notBefore = max(notBefore ?? retry, min(retry, now.addingTimeInterval(86_400)))
        }
        return PollingHint(notBefore: notBefore, location: location(state), discoveredFrom: discoveredFrom(state))
    }

    /// A validator to send back in `If-None-Match` or `If-Modified-Since`; `nil` (the next poll
    /// is unconditional) for one that ``HeaderValue`` refuses: it is neither stored nor sent.
    static func validator(_ value: String, limit: Int) -> String? {
        guard let cleaned = FeedText.clean(value, limit: limit), HeaderValue.isValid(cleaned, allowsSpace: true) else { return nil }
        return cleaned
    }
}
