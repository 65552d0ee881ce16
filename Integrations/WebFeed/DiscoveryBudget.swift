import Core
import Foundation
import IntegrationKit
import Synchronization

/// How many requests finding feeds may send to each host, for one `feedsync add`: an OPML file
/// that lists one site many times, or many pages of one site, costs that site at most this many
/// requests, redirect hops included.
///
/// Hosts are counted as ``Core/HostGate`` keys them: host and port (another port is another
/// server). A request past the budget is not sent; it fails with ``Spent``.
public final class DiscoveryBudget: Sendable {
    /// A request that was not sent because its host's budget is spent.
    public struct Spent: Error, Sendable, CustomStringConvertible {
        /// `host:port`.
        public var host: String
        public var limit: Int
        public var description: String { "the \(limit) requests to \(host) that finding feeds may send are spent" }
    }

    public let requestsPerHost: Int
    private let sent = Mutex<[String: Int]>([:])

    /// A budget of `requestsPerHost` requests to each host.
    public init(requestsPerHost: Int) { self.requestsPerHost = max(0, requestsPerHost) }

    /// The key a request to `url` counts under: `host:port`; `nil` for a URL that is not http(s).
    public static func host(of url: URL) -> String? { Origin(url)?.gateKey }

    /// Whether a request to `url` may still be sent.
    public func allows(_ url: URL) -> Bool {
        guard let host = Self.host(of: url) else { return true }
        return sent.withLock { $0[host, default: 0] < requestsPerHost }
    }

    /// Requests sent so far, by host.
    public var requestsByHost: [String: Int] { sent.withLock { $0 } }

    /// Counts one request to `url`, or throws when its host's budget is spent.
    func take(_ url: URL) throws(Spent) {
        guard let host = Self.host(of: url) else { return }
        let allowed = sent.withLock { counts in
            guard counts[host, default: 0] < requestsPerHost else { return false }
            counts[host, default: 0] += 1
            return true
        }
        guard allowed else { throw Spent(host: host, limit: requestsPerHost) }
    }
}

/// A transport that takes each request from a ``DiscoveryBudget`` before it sends it.
struct BudgetedTransport: HTTPTransport {
    let base: any HTTPTransport
    let budget: DiscoveryBudget

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try budget.take(request.url)
        return try await base.send(request)
    }

    func close() async { await base.close() }

    var traffic: (any TrafficObserver)? { base.traffic }
}
