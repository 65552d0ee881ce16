import Core
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends authorised GETs to one Mastodon server, paces them by its rate-limit headers, and
/// translates failures into Core's error vocabulary.
final class MastodonClient: Sendable {
    /// What came back: the decoded body's bytes and the pagination links.
    struct Response: Sendable {
        var body: Data
        var next: URL?
        var previous: URL?
    }

    let server: URL
    private let token: Secret
    private let session: URLSession
    private let requests: RequestCounter
    private let gate: HostGate
    private let pacer = MastodonPacer()

    init(server: URL, token: Secret, timeout: TimeInterval, requests: RequestCounter, gate: HostGate) {
        self.server = server
        self.token = token
        self.requests = requests
        self.gate = gate
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieAcceptPolicy = .never
        session = URLSession(configuration: configuration)
    }

    func close() { session.finishTasksAndInvalidate() }

    /// The URL of an API path on this server.
    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + path
        components.queryItems = query.isEmpty ? nil : query
        return components.url!
    }

    /// GETs `url`, which must be on this server (a `Link` pointing elsewhere would get the token).
    ///
    /// - Throws: ``ServiceError``: `.unauthorized` (401/403), `.rateLimited` (429, until the
    ///   reset), `.invalidRequest` (404/422: a wrong list, account or tag), `.unavailable`.
    func get(_ url: URL, _ operation: String) async throws -> Response {
        let operation = "\(operation) \(server.host ?? "")"
        guard url.scheme == server.scheme, url.host == server.host, url.port == server.port else {
            throw ServiceError(.invalidResponse, operation, "a pagination link points to another server (\(url.host ?? "?"))")
        }
        try await pacer.waitForQuota(operation)
        var request = URLRequest(url: url)
        request.setValue("Bearer \(token.revealed)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let host = "\(server.host ?? ""):\(server.port ?? 0)"
        let prepared = request
        let (data, http): (Data, HTTPURLResponse)
        do {
            (data, http) = try await gate.withPermit(for: host) { [session, requests] in
                requests.add()
                let (data, response) = try await session.data(for: prepared)
                guard let http = response as? HTTPURLResponse else {
                    throw ServiceError(.invalidResponse, operation, "the answer is not HTTP")
                }
                return (data, http)
            }
        } catch let error as ServiceError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as URLError where error.code == .cancelled {
            throw CancellationError()
        } catch {
            throw ServiceError(.unavailable, operation, "the request failed (\(error.localizedDescription))")
        }
        let headers = Dictionary(http.allHeaderFields.compactMap { key, value in
            (key as? String).map { ($0.lowercased(), "\(value)") }
        }, uniquingKeysWith: { first, _ in first })
        await pacer.record(limit: headers["x-ratelimit-limit"], remaining: headers["x-ratelimit-remaining"],
                           reset: headers["x-ratelimit-reset"])
        let message = (try? JSONDecoder().decode(MastodonError.self, from: data)).map { ": \($0.error.prefix(200))" } ?? ""
        switch http.statusCode {
        case 200..<300:
            let links = LinkHeader.parse(headers["link"] ?? "")
            return Response(body: data, next: links["next"], previous: links["prev"])
        case 401, 403:
            throw ServiceError(.unauthorized, operation, "the server rejected the access token (\(http.statusCode)\(message)); "
                               + "create a new one in the account's Development settings")
        case 429:
            let until = headers["x-ratelimit-reset"].flatMap(RFC3339Date.parse) ?? Date().addingTimeInterval(60)
            throw ServiceError(.rateLimited(until: until), operation, "the server answered 429\(message)")
        case 404, 410, 422:
            throw ServiceError(.invalidRequest, operation, "the server answered \(http.statusCode)\(message); check the timeline in the config")
        default:
            throw ServiceError(.unavailable, operation, "the server answered \(http.statusCode)\(message)")
        }
    }
}

/// Paces requests by `X-RateLimit-*`: it waits for the reset once the quota is spent, and
/// spreads the last tenth of the quota over the time left, so a sync slows down before it
/// runs out rather than drawing 429s.
actor MastodonPacer {
    private var limit: Int?
    private var remaining: Int?
    private var resetAt: Date?
    /// The longest it waits; past that the request fails as rate limited.
    let maxWait: TimeInterval = 120

    func waitForQuota(_ operation: String) async throws {
        guard let remaining, let limit, let resetAt else { return }
        let untilReset = resetAt.timeIntervalSinceNow
        guard untilReset > 0 else { return }
        let wait: TimeInterval
        if remaining <= 0 {
            wait = untilReset
        } else if remaining * 10 < limit {
            wait = untilReset / Double(remaining + 1)
        } else {
            return
        }
        guard wait <= maxWait else {
            throw ServiceError(.rateLimited(until: resetAt), operation, "the request quota is spent until \(resetAt.formatted(.iso8601))")
        }
        try await Task.sleep(for: .seconds(wait))
    }

    func record(limit: String?, remaining: String?, reset: String?) {
        guard let remaining = remaining.flatMap({ Int($0) }), let limit = limit.flatMap({ Int($0) }) else { return }
        self.limit = limit
        self.remaining = remaining
        self.resetAt = reset.flatMap(RFC3339Date.parse)
    }
}

/// Parses an HTTP `Link` header: `<https://…?max_id=1>; rel="next", <…>; rel="prev"`.
enum LinkHeader {
    static func parse(_ header: String) -> [String: URL] {
        var links: [String: URL] = [:]
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let target = pieces.first, target.hasPrefix("<"), target.hasSuffix(">"),
                  let url = URL(string: String(target.dropFirst().dropLast())) else { continue }
            for parameter in pieces.dropFirst() where parameter.lowercased().hasPrefix("rel=") {
                let value = parameter.dropFirst(4).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                for rel in value.split(separator: " ") { links[String(rel)] = url }
            }
        }
        return links
    }
}
