import Foundation

/// A request to what serves the mirror (the reader listener), as the app's listener read it:
/// bounded already (head, body) and with the client's address.
public struct ServedRequest: Sendable {
    public var method: String
    /// The path, percent-encoded as sent, without the query.
    public var path: String
    /// The query, percent-encoded, without the `?`.
    public var query: String
    /// The head's fields, names lowercased.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The client's address; behind a proxy, the proxy's.
    public var peer: String

    public init(method: String, path: String, query: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                peer: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.peer = peer
    }

    /// The value of the first field named `name` (any case).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }
}

/// The answer to a ``ServedRequest``.
public struct ServedResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    public var headers: [(String, String)]

    public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// A plain-text answer: one line for an error.
    public static func text(_ status: Int, _ text: String, headers: [(String, String)] = []) -> ServedResponse {
        ServedResponse(status: status, body: Array(text.utf8), headers: headers)
    }
}

/// A feed as it is served: its config name, and the group (label) the config gives it.
public struct ServedFeed: Hashable, Sendable {
    public var name: String
    public var group: String?

    public init(name: String, group: String? = nil) {
        self.name = name
        self.group = group
    }
}

/// What a serving integration is given: the store's roles it reads and marks through, and the
/// feeds the config serves.
public struct ServingContext: Sendable {
    public var store: any FeedReader & ReadMarker & ReaderAccountStore
    /// The feeds and saved searches served, as the config says now (a reload replaces them).
    public var catalog: ServedCatalog
    /// Told, as one sentence, of what an operator should see (a refused login); never a secret.
    public var log: Logger

    /// The feeds served now.
    public var feeds: [ServedFeed] { catalog.snapshot.feeds }
    /// Saved searches (full-text queries) served as feeds now, by name.
    public var searches: [String: String] { catalog.snapshot.searches }

    public init(store: any FeedReader & ReadMarker & ReaderAccountStore, catalog: ServedCatalog, log: Logger = .disabled) {
        self.store = store
        self.catalog = catalog
        self.log = log
    }

    /// A context whose feeds and searches never change (a test's).
    public init(store: any FeedReader & ReadMarker & ReaderAccountStore, feeds: [ServedFeed], searches: [String: String] = [:],
                log: Logger = .disabled) {
        self.init(store: store, catalog: ServedCatalog(feeds: feeds, searches: searches), log: log)
    }
}

/// How an integration serves the mirror to clients (the config's `"serve"` section).
public struct ServingCapability: Sendable {
    /// Builds the answerer of requests over the context given; it reads the store per request.
    public var makeHandler: @Sendable (ServingContext) -> @Sendable (ServedRequest) async -> ServedResponse

    public init(makeHandler: @escaping @Sendable (ServingContext) -> @Sendable (ServedRequest) async -> ServedResponse) {
        self.makeHandler = makeHandler
    }
}
