import Core
import Foundation

/// Sends requests to the HTTP API and translates what comes back into Core's error vocabulary.
struct HTTPAPIClient: Sendable {
    let transport: any HTTPTransport
    /// The server as messages name it: its base URL, or the fixture folder.
    let server: String
    /// `host[:port]`, the key under which requests take turns at the ``HostGate``.
    let host: String
    let requests: RequestCounter
    let gate: HostGate
    var pacer = RateLimitPacer()

    /// Sends a request and returns a `2xx` or `304` response, first waiting out a spent quota.
    ///
    /// - Parameter operation: what is being done, for the error: `"logging in to"`.
    /// - Throws: ``ServiceError``: `.unauthorized` (401, 403), `.rateLimited` (429, with the
    ///   time from `Retry-After`), `.unavailable` (5xx, 404, no answer), `.invalidRequest` (400).
    func send(_ request: HTTPRequest, _ operation: String) async throws -> HTTPResponse {
        let response: HTTPResponse
        do {
            // Under the host's permit, so requests in flight together see each other's quota.
            response = try await gate.withPermit(for: host) { [pacer, requests, transport] in
                try await pacer.waitForQuota("\(operation) \(server)")
                requests.add()
                let response = try await transport.send(request)
                await pacer.record(response)
                return response
            }
        } catch let error as ServiceError {
            throw ServiceError(error.code, "\(operation) \(server)", error.reason)
        }
        func failure(_ code: ServiceError.Code, _ hint: String = "") -> ServiceError {
            ServiceError(code, "\(operation) \(server)", "the server answered \(response.status)\(Self.detail(response))\(hint)")
        }
        switch response.status {
        case 200..<300, 304: return response
        case 401, 403: throw failure(.unauthorized)
        case 429:
            let reset = response.header("X-RateLimit-Reset").flatMap { RateLimitPacer.resetDate($0) }
            throw failure(.rateLimited(until: Self.retryAfter(response) ?? reset))
        case 400, 422: throw failure(.invalidRequest)
        case 404: throw failure(.unavailable, "; is the base URL right?")
        case 500..<600: throw failure(.unavailable)
        default: throw failure(.invalidResponse)
        }
    }

    /// Decodes a JSON body, or throws `.invalidResponse` naming the request.
    func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse, _ operation: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: response.body)
        } catch {
            throw ServiceError(.invalidResponse, "\(operation) \(server)", "the response body is not the JSON the API documents")
        }
    }

    func encode(_ body: some Encodable) -> Data {
        // Encoding plain string structs cannot fail.
        (try? JSONEncoder().encode(body)) ?? Data()
    }

    /// `" (code: message)"` from an error body, or `""` when there is none to read.
    private static func detail(_ response: HTTPResponse) -> String {
        guard let body = try? JSONDecoder().decode(APIErrorResponse.self, from: response.body) else { return "" }
        let parts = [body.error.code, body.error.message].compactMap { $0 }.map { String($0.prefix(200)) }
        return parts.isEmpty ? "" : " (\(parts.joined(separator: ": ")))"
    }

    /// When a `Retry-After` header (seconds or an HTTP date) says to come back.
    static func retryAfter(_ response: HTTPResponse, now: Date = Date()) -> Date? {
        guard let value = response.header("Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Double(value), seconds >= 0, seconds.isFinite { return now.addingTimeInterval(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value)
    }
}
