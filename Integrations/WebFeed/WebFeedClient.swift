import Core
import Foundation
import IntegrationKit

/// GETs a web feed conditionally and follows its redirects, remembering the permanent ones.
///
/// Redirects are followed here rather than by the transport: a 301 or 308 moves the feed's
/// stored URL, a 302, 303 or 307 is followed only for this request. They may lead to another
/// origin (feeds move between hosts), which the transport refuses for requests that carry
/// credentials; a private feed's credentials and headers (``WebFeedHeaders``) go only to the
/// configured URL's origin, so nothing leaks by following them.
struct WebFeedClient: Sendable {
    /// What the last hop answered, and where the feed now lives.
    struct Fetched: Sendable {
        var response: HTTPResponse
        /// The URL whose answer this is.
        var url: URL
        /// The URL to poll next time: moved by permanent redirects only.
        var permanentURL: URL
    }

    let transport: any HTTPTransport
    let requests: RequestCounter
    let gate: HostGate
    /// The user agent, and the headers and credentials for the feed's own origin.
    let headers: WebFeedHeaders
    let maxRedirects: Int

    /// - Throws: ``Core/ServiceError`` `.contractViolation` for too many redirects or one to a
    ///   URL that is not http(s); the transport's errors otherwise.
    func get(_ start: URL, etag: String?, lastModified: String?) async throws -> Fetched {
        var url = start
        var permanent = start
        var onlyPermanentSoFar = true
        var hops = 0
        while true {
            guard let origin = Origin(url) else {
                throw ServiceError(.contractViolation, "reading the feed at \(Terminal.safe(start.absoluteString, limit: 200))",
                                   "a redirect leads to \(Terminal.safe(url.absoluteString, limit: 200)), which is not an http(s) URL")
            }
            var headers = ["Accept": "application/atom+xml, application/rss+xml, application/feed+json, application/json;q=0.9, "
                                     + "application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"]
            headers.merge(self.headers.fields(for: url)) { _, configured in configured }
            // Validators belong to the URL they came from, not to a temporary stand-in.
            if url == permanent {
                if let etag { headers["If-None-Match"] = etag }
                if let lastModified { headers["If-Modified-Since"] = lastModified }
            }
            let request = HTTPRequest(url: url, headers: headers, followsRedirects: false)
            let response = try await gate.withPermit(for: origin.gateKey) { [requests, transport] in
                requests.add()
                return try await transport.send(request)
            }
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.header("Location") else {
                return Fetched(response: response, url: url, permanentURL: permanent)
            }
            hops += 1
            guard hops <= maxRedirects, let target = URL(string: location, relativeTo: url)?.absoluteURL else {
                throw ServiceError(.contractViolation, "reading the feed at \(Terminal.safe(start.absoluteString, limit: 200))",
                                   hops > maxRedirects ? "the server redirected more than \(maxRedirects) times in a row"
                                                       : "the server redirected to \(Terminal.safe(location, limit: 200)), which is not a URL")
            }
            // A chain of permanent moves moves the feed; after a temporary hop, nothing more does.
            if response.status == 301 || response.status == 308 {
                if onlyPermanentSoFar { permanent = target }
            } else {
                onlyPermanentSoFar = false
            }
            url = target
        }
    }
}
