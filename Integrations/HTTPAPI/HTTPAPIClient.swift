import Core
import Foundation
import IntegrationKit

/// Sends requests to the HTTP API and translates what comes back into Core's error vocabulary.
struct HTTPAPIClient: Sendable {
    let transport: any HTTPTransport
    /// Where paths resolve: the configured server, or a stand-in for a fixture folder.
    let baseURL: URL
    /// The server as messages name it: its base URL, or the fixture folder.
    let server: String
    let requests: RequestCounter
    let gate: HostGate
    let pacer: RateLimitPacer
    /// How a wait for the quota hands back the feed's permits.
    let waiter: Waiter

    init(transport: any HTTPTransport, baseURL: URL, server: String, requests: RequestCounter, gate: HostGate,
         pacer: RateLimitPacer = RateLimitPacer(), waiter: Waiter = .plain) {
        self.transport = transport
        self.baseURL = baseURL
        self.server = server
        self.requests = requests
        self.gate = gate
        self.pacer = pacer
        self.waiter = waiter
    }

    /// A request for `path` on the server, its query sorted by name so equal requests look equal.
    func request(_ method: String, _ path: String, query: [(name: String, value: String)] = [],
                 headers: [String: String] = [:], body: Data? = nil) -> HTTPRequest {
        let allowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+?#"))
        let pairs = query.sorted { $0.name < $1.name }.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
        }
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        let url = URL(string: base + path + (pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&"))) ?? baseURL
        return HTTPRequest(method: method, url: url, headers: headers, body: body)
    }

    /// Sends a request and returns a `2xx` or `304` response, first waiting out a spent quota.
    ///
    /// - Parameter operation: what is being done, for the error: `"logging in to"`.
    /// - Throws: ``ServiceError``: `.unauthorized` (401, 403), `.rateLimited` (429, until
    ///   `Retry-After` or `X-RateLimit-Reset`), `.unavailable` (5xx, 404, no answer),
    ///   `.invalidRequest` (400, 422), `.contractViolation` (a redirect elsewhere, a body too large).
    func send(_ request: HTTPRequest, _ operation: String) async throws -> HTTPResponse {
        let operation = "\(operation) \(server)"
        let response = try await transport.sendPaced(request, gate: gate, pacer: pacer, waiter: waiter, requests: requests, operation: operation)
        if (200..<300).contains(response.status) || response.status == 304 { return response }
        // Only an error's body is read as an error message: decoding every page that way cost
        // as much as reading its posts.
        // An error's body is `{"error": {"code": …, "message": …}}`.
        let detail = HTTPStatus.detail([JSONReader.string(at: ["error", "code"], in: response.body),
                                        JSONReader.string(at: ["error", "message"], in: response.body)])
        guard var error = HTTPStatus.error(for: response, operation, detail: detail) else { return response }
        // This API has no resource that may be missing: a 404 means the base URL is wrong,
        // which may be a proxy or deployment hiccup, so it is retried like a 5xx.
        if response.status == 404 {
            error = ServiceError(.unavailable, operation, "\(error.reason); is the base URL right?")
        }
        throw error
    }

    /// Reads a JSON body with `read`, or throws `.invalidResponse` naming the request.
    func decode<T>(_ read: (Data) throws -> T, from response: HTTPResponse, _ operation: String) throws -> T {
        do {
            return try read(response.body)
        } catch {
            throw ServiceError(.invalidResponse, "\(operation) \(server)", "the response body is not the JSON the API documents")
        }
    }

    func encode(_ body: some Encodable) -> Data {
        // Encoding plain string structs cannot fail.
        (try? JSONEncoder().encode(body)) ?? Data()
    }
}
