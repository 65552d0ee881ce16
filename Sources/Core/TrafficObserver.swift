import Foundation

/// Told about what the integrations put on the wire, so a daemon can count it for its operator.
///
/// The transport calls it once per request it sends (each redirect hop and retry included),
/// from whatever thread the transfer finished on: implementations must be cheap and must not
/// block.
public protocol TrafficObserver: Sendable {
    /// A request to `host` finished: `status` is the answer's code, or `nil` when no answer
    /// arrived (refused, reset, timed out, over a limit).
    func requestFinished(host: String, status: Int?)

    /// A request to `host` waited out the server's quota (a paced wait, or a `429`/`503` with
    /// `Retry-After`).
    func rateLimitWait(host: String)
}

/// The observer of a process that counts nothing: every command but the daemon.
public struct NoTrafficObserver: TrafficObserver {
    public init() {}
    public func requestFinished(host: String, status: Int?) {}
    public func rateLimitWait(host: String) {}
}
