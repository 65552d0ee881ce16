import Core
import Foundation

/// One HTTP request as an integration describes it, before any transport sends it.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The absolute URL, query included.
    public var url: URL
    public var headers: [String: String]
    public var body: Data?
    /// Whether the transport follows same-origin `GET` redirects itself (the default), or hands
    /// every redirect back to the caller, which then decides (a web feed remembers 301/308).
    public var followsRedirects: Bool

    public init(method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil, followsRedirects: Bool = true) {
        self.followsRedirects = followsRedirects
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// Path and query as they go on the request line: `/v1/feed?cursor=200&limit=100`.
    public var target: String {
        let path = url.path.isEmpty ? "/" : URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        guard let query = url.query(percentEncoded: true), !query.isEmpty else { return path }
        return path + "?" + query
    }
}

/// What came back: status, header fields with lower-cased names, and the whole (decoded) body.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }

    /// A header field by name, in any case.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// The one thing an HTTP integration needs from a network: send a request, get a response.
///
/// ``CurlTransport`` speaks to real servers under ``HTTPLimits``; tests and offline
/// fixtures substitute their own, so the same decoding and mapping code runs either way.
public protocol HTTPTransport: Sendable {
    /// Sends one request.
    ///
    /// - Returns: the response, whatever its status: a status is not an error here.
    /// - Throws: ``Core/ServiceError``: `.unavailable` when no response arrived (refused,
    ///   reset, timed out); `.contractViolation` for a redirect to another origin, a body over
    ///   the size limit, or a request past its deadline.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse

    /// Releases idle connections, when a feed that used the transport goes away.
    func close() async

    /// Told about each request the transport sends; `nil` when no one counts them.
    var traffic: (any TrafficObserver)? { get }
}

extension HTTPTransport {
    public var traffic: (any TrafficObserver)? { nil }
}
