import Core
import Foundation
import IntegrationKit

/// Sends one webhook delivery: a JSON POST, signed with HMAC-SHA256 over `timestamp.body`.
///
/// Headers, as Stripe and GitHub lay theirs out:
/// - `X-Feedsync-Delivery`: the delivery's id, the same on every attempt;
/// - `X-Feedsync-Timestamp`: the attempt's time, Unix seconds;
/// - `X-Feedsync-Signature`: `sha256=` and the hex HMAC-SHA256, under the endpoint's secret, of
///   the timestamp, a `.`, and the body's bytes.
///
/// A redirect is never followed (it is a failed attempt); the answer's body is read to at most
/// ``maxResponseBytes``, and the whole attempt takes at most its ``deadline``. No header of any
/// feed's server goes with it: the request is made here, from the delivery alone.
public struct WebhookSender: WebhookSending {
    /// How an attempt ended.
    public enum Outcome: Sendable, Equatable {
        case delivered
        /// Not delivered, with why, in words.
        case failed(String)
    }

    /// The most of an answer read.
    public static let maxResponseBytes = 64 << 10

    let transport: any HTTPTransport
    let userAgent: String
    /// The longest one attempt may take.
    public let deadline: TimeInterval

    public init(userAgent: String, deadline: TimeInterval = 10, transport: (any HTTPTransport)? = nil) {
        self.userAgent = userAgent
        self.deadline = deadline
        self.transport = transport ?? CurlTransport(limits: HTTPLimits(idleTimeout: deadline, deadline: deadline,
                                                                        maxBodyBytes: Self.maxResponseBytes, maxRedirects: 0))
    }

    /// The `X-Feedsync-Signature` value of `body` sent at `timestamp` under `secret`.
    public static func signature(body: Data, timestamp: Int64, secret: Secret) -> String {
        "sha256=" + HMACSHA256.hex(key: Data(secret.revealed.utf8), message: Data("\(timestamp).".utf8) + body)
    }

    /// One attempt to deliver `delivery` with `secret`, at `now`: `nil` when delivered, or why not.
    public func send(_ delivery: WebhookDelivery, secret: Secret, now: Date) async -> String? {
        switch await attempt(delivery, secret: secret, now: now) {
        case .delivered: nil
        case .failed(let reason): reason
        }
    }

    /// One attempt to deliver `delivery` with `secret`, at `now`.
    public func attempt(_ delivery: WebhookDelivery, secret: Secret, now: Date) async -> Outcome {
        guard let url = URL(string: delivery.endpoint), Origin(url) != nil else { return .failed("the endpoint is not an http(s) URL") }
        let body = Data(delivery.body.utf8)
        let timestamp = Int64(now.timeIntervalSince1970)
        let request = HTTPRequest(method: "POST", url: url, headers: [
            "Content-Type": "application/json", "User-Agent": userAgent,
            "X-Feedsync-Delivery": delivery.id, "X-Feedsync-Timestamp": String(timestamp),
            "X-Feedsync-Signature": Self.signature(body: body, timestamp: timestamp, secret: secret),
        ], body: body, followsRedirects: false)
        do {
            let response = try await transport.send(request)
            switch response.status {
            case 200..<300: return .delivered
            case 300..<400: return .failed("the endpoint answered \(response.status), a redirect, which is never followed")
            default: return .failed("the endpoint answered \(response.status)")
            }
        } catch let error as ServiceError {
            return .failed(error.reason)
        } catch {
            return .failed("\(error)")
        }
    }

    /// Releases the transport's connections.
    public func close() async { await transport.close() }
}
