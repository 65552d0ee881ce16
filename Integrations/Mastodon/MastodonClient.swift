import Core
import Foundation
import IntegrationKit

/// Sends authorised GETs to one Mastodon server, paces them by its rate-limit headers, and
/// translates failures into Core's error vocabulary.
struct MastodonClient: Sendable {
    /// What came back: the decoded body's bytes and the pagination links.
    struct Response: Sendable {
        var body: Data
        var next: URL?
        var previous: URL?
    }

    let server: URL
    let origin: Origin
    private let token: Secret
    private let transport: any HTTPTransport
    private let requests: RequestCounter
    private let gate: HostGate
    private let pacer: RateLimitPacer
    /// How a wait for the quota hands back the feed's permits.
    private let waiter: Waiter

    init(server: URL, token: Secret, transport: any HTTPTransport, requests: RequestCounter, gate: HostGate, pacer: RateLimitPacer,
         waiter: Waiter = .plain) {
        self.server = server
        // The config only accepts http(s) URLs with a host, so this cannot fail.
        self.origin = Origin(server)!
        self.token = token
        self.transport = transport
        self.requests = requests
        self.gate = gate
        self.pacer = pacer
        self.waiter = waiter
    }

    func close() async { await transport.close() }

    /// The URL of an API path on this server.
    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + path
        components.queryItems = query.isEmpty ? nil : query
        return components.url!
    }

    /// GETs `url`, which must be on this server: a `Link` pointing elsewhere would get the token.
    ///
    /// - Throws: ``ServiceError``: `.unauthorized` (401/403), `.rateLimited` (429, until the
    ///   reset), `.invalidRequest` (404/410/422: a wrong list, account or tag), `.unavailable`,
    ///   `.contractViolation` (a link or redirect to another origin, a malformed `Link`).
    func get(_ url: URL, _ operation: String) async throws -> Response {
        let operation = "\(operation) \(origin.host)"
        guard origin.admits(url) else {
            throw ServiceError(.contractViolation, operation, "a pagination link points to \(Origin(url)?.description ?? "a URL that is not http(s)"), "
                               + "not to \(origin); the token is sent only to the configured server")
        }
        try HeaderValue.check(token.revealed, "access token", operation)
        let request = HTTPRequest(url: url, headers: ["Authorization": "Bearer \(token.revealed)", "Accept": "application/json"])
        let response = try await transport.sendPaced(request, gate: gate, pacer: pacer, waiter: waiter, requests: requests, operation: operation)
        // Only an error's body is read for its message: a timeline page is an array, and decoding
        // one as an error body first cost as much as reading its statuses.
        let isError = !(200..<300).contains(response.status) && response.status != 304
        // An error's body is `{"error": "…"}`.
        let message = isError ? JSONReader.string(at: ["error"], in: response.body).map { HTTPStatus.detail([$0]) } ?? "" : ""
        if let error = HTTPStatus.error(for: response, operation, detail: message) {
            switch error.code {
            case .unauthorized:
                throw ServiceError(.unauthorized, operation, "the server rejected the access token (\(response.status)\(message)); "
                                   + "create a new one in the account's Development settings")
            case .rateLimited(let until):
                // Mastodon often sends no Retry-After; a 429 without any reset waits a minute.
                throw ServiceError(.rateLimited(until: until ?? Date().addingTimeInterval(60)), operation, error.reason)
            case .invalidRequest:
                throw ServiceError(.invalidRequest, operation, "\(error.reason); check the timeline in the config")
            default:
                throw error
            }
        }
        let links: [String: URL]
        do {
            links = try LinkHeader.parse(response.header("Link") ?? "", base: url)
        } catch {
            throw ServiceError(.contractViolation, operation, error.reason)
        }
        return Response(body: response.body, next: links["next"], previous: links["prev"])
    }
}
