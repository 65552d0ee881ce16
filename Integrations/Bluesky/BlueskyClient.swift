import Core
import Foundation
import IntegrationKit

/// Calls XRPC methods on one AT Protocol service (a PDS, or an AppView), paces them by the
/// `RateLimit-*` headers, and translates failures into Core's error vocabulary.
///
/// Every URL is built from the configured service, so tokens go nowhere else: the client
/// follows no links, and the transport follows redirects only within the origin.
struct BlueskyClient: Sendable {
    let service: URL
    let origin: Origin
    private let transport: any HTTPTransport
    private let requests: RequestCounter
    private let gate: HostGate
    /// The quota of the read methods.
    private let pacer: RateLimitPacer
    /// The session methods have quotas of their own (createSession: 30 per 5 minutes), which
    /// must not slow the reads down, nor the reads spend them.
    private let sessionPacer: RateLimitPacer
    /// How a wait for a quota hands back the feed's permits.
    private let waiter: Waiter

    init(service: URL, transport: any HTTPTransport, requests: RequestCounter, gate: HostGate,
         pacer: RateLimitPacer, sessionPacer: RateLimitPacer, waiter: Waiter = .plain) {
        self.service = service
        // The config only accepts http(s) URLs with a host, so this cannot fail.
        self.origin = Origin(service)!
        self.transport = transport
        self.requests = requests
        self.gate = gate
        self.pacer = pacer
        self.sessionPacer = sessionPacer
        self.waiter = waiter
    }

    func close() async { await transport.close() }

    /// The URL of an XRPC method on this service.
    func url(_ method: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: service, resolvingAgainstBaseURL: false)!
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + "/xrpc/" + method
        components.queryItems = query.isEmpty ? nil : query
        // `+` is a space to some servers' query parsers; spell it out.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.url!
    }

    /// Calls a query (GET) with the access token.
    func query(_ method: String, _ parameters: [URLQueryItem], token: Secret, _ operation: String) async throws -> HTTPResponse {
        let request = HTTPRequest(url: url(method, query: parameters),
                                  headers: ["Authorization": "Bearer \(token.revealed)", "Accept": "application/json"])
        return try await send(request, operation, pacer: pacer)
    }

    /// Calls a procedure (POST) of `com.atproto.server`, with a JSON body or a bearer token.
    func procedure(_ method: String, body: Data?, token: Secret?, _ operation: String) async throws -> HTTPResponse {
        var headers = ["Accept": "application/json"]
        if body != nil { headers["Content-Type"] = "application/json" }
        if let token { headers["Authorization"] = "Bearer \(token.revealed)" }
        return try await send(HTTPRequest(method: "POST", url: url(method), headers: headers, body: body), operation, pacer: sessionPacer)
    }

    /// Sends a request under the host's permit and returns a successful response.
    ///
    /// - Throws: ``ServiceError``: `.unauthorized` (401, 403, or 400 `ExpiredToken` /
    ///   `InvalidToken`), `.rateLimited` (429, until the reset), `.invalidRequest` (other
    ///   400s: an unknown feed, list or actor), `.unavailable` (5xx), `.contractViolation`.
    private func send(_ request: HTTPRequest, _ operation: String, pacer: RateLimitPacer) async throws -> HTTPResponse {
        let operation = "\(operation) \(origin.host)"
        // Every URL is built from the service; this holds that for whatever builds one later.
        guard origin.admits(request.url) else {
            throw ServiceError(.contractViolation, operation, "\(Origin(request.url)?.description ?? "a URL that is not http(s)") is not "
                               + "\(origin); the session goes only to the configured service")
        }
        let response = try await transport.sendPaced(request, gate: gate, pacer: pacer, waiter: waiter, requests: requests, operation: operation,
                                                      adjust: { Self.withRelativeReset($0) })
        if let error = Self.error(for: response, operation) { throw error }
        return response
    }

    /// The error an XRPC answer stands for, or `nil` for a success.
    static func error(for response: HTTPResponse, _ operation: String, now: Date = Date()) -> ServiceError? {
        guard !(200..<300).contains(response.status) else { return nil }
        let body = response.status >= 400 ? BlueskyError(body: response.body) : nil
        let detail = HTTPStatus.detail([body?.error, body?.message])
        if response.status == 400, body?.error == "ExpiredToken" || body?.error == "InvalidToken" {
            return ServiceError(.unauthorized, operation, "the server no longer accepts the token (\(response.status)\(detail))")
        }
        guard let error = HTTPStatus.error(for: response, operation, detail: detail, now: now) else { return nil }
        switch error.code {
        case .rateLimited(let until):
            // A 429 without any reset waits a minute.
            return ServiceError(.rateLimited(until: until ?? now.addingTimeInterval(60)), operation, error.reason)
        case .invalidRequest:
            return ServiceError(.invalidRequest, operation, "\(error.reason); check the timeline and identifier in the config")
        default:
            return error
        }
    }

    /// The response with `RateLimit-Reset` in seconds from now, as ``RateLimitPacer`` reads it.
    ///
    /// Bluesky's PDS sends the reset as a Unix time (`1767225900`), where the IETF draft has
    /// seconds from now; and with no reset at all, the window of `RateLimit-Policy`
    /// (`3000;w=300`) is the longest the quota can take to come back.
    static func withRelativeReset(_ response: HTTPResponse, now: Date = Date()) -> HTTPResponse {
        guard response.header("RateLimit-Remaining") != nil else { return response }
        var headers = response.headers
        let reset = response.header("RateLimit-Reset").flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        if let reset, reset.isFinite, reset >= 1_000_000_000, reset < 100_000_000_000 {
            headers["ratelimit-reset"] = String(Int(max(0, reset - now.timeIntervalSince1970).rounded(.up)))
        } else if reset == nil, let window = policyWindow(response.header("RateLimit-Policy"), limit: response.header("RateLimit-Limit")) {
            headers["ratelimit-reset"] = String(window)
        } else {
            return response
        }
        return HTTPResponse(status: response.status, headers: headers, body: response.body)
    }

    /// The window, in seconds, of the policy in `RateLimit-Policy` whose quota is `limit`
    /// (or of the first one): `"3000;w=300"` → 300.
    static func policyWindow(_ field: String?, limit: String?) -> Int? {
        guard let field else { return nil }
        var first: Int?
        for policy in field.split(separator: ",").prefix(16) {
            let parts = policy.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let window = parts.dropFirst().first(where: { $0.hasPrefix("w=") }).flatMap({ Int($0.dropFirst(2)) }),
                  (1...86_400).contains(window) else { continue }
            if parts.first == limit?.trimmingCharacters(in: .whitespaces) { return window }
            first = first ?? window
        }
        return first
    }
}
