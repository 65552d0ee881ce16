import Foundation

/// The one thing the HTTP API client needs from a network: send a request, get a response.
///
/// `URLSessionTransport` speaks to a real server; `FixtureTransport` replays recorded
/// responses, so the same decoding and mapping code runs offline and in tests.
protocol HTTPTransport: Sendable {
    /// Sends one request.
    /// - Throws: ``Core/ServiceError`` `.unavailable` when no response arrived (refused,
    ///   reset, timed out); an answer with any status is returned, not thrown.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
    /// Releases connections. The transport is not used afterwards.
    func close() async
}

struct HTTPRequest: Sendable {
    var method: String
    var path: String
    /// Query parameters; `target` sorts them by name so equal requests look equal.
    var query: [(name: String, value: String)] = []
    var headers: [String: String] = [:]
    var body: Data?

    /// Path and query as they go on the request line: `/v1/feed?cursor=200&limit=100`.
    var target: String {
        guard !query.isEmpty else { return path }
        let allowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+?#"))
        let pairs = query.sorted { $0.name < $1.name }.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
        }
        return path + "?" + pairs.joined(separator: "&")
    }
}

struct HTTPResponse: Sendable {
    var status: Int
    /// Header fields with lower-cased names.
    var headers: [String: String]
    var body: Data

    init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}
