import Core
import Foundation

/// Paces the requests of one account on one server by the quota the server announces, so a
/// sync slows down before the quota runs out instead of drawing `429`s.
///
/// It reads either form a server may send:
/// - `X-RateLimit-Limit/Remaining/Reset`, as Mastodon and the custom API send them (the reset
///   as Unix seconds, seconds from now, or an RFC 3339 time);
/// - the IETF `RateLimit-Limit/Remaining/Reset` fields, as Bluesky sends them (the reset in
///   seconds from now), or the combined `RateLimit: limit=…, remaining=…, reset=…`.
///
/// With the quota spent a request's turn is the reset; in the last tenth of the quota the
/// turns spread what is left over the time left. A turn further than ``maxWait`` away fails as
/// rate limited. The pacer only hands out turns: the caller waits for its turn with its
/// permits handed back (``HTTPTransport/sendPaced(_:gate:pacer:waiter:requests:operation:adjust:)``).
///
/// A server counts its quota per account, so every feed of that account on that server shares
/// one pacer (``shared(for:account:in:log:)``) and sees the requests of the others.
public actor RateLimitPacer {
    private var limit: Int?
    private var remaining: Int?
    private var resetAt: Date?
    /// The last turn handed out, so turns of feeds sharing the pacer are spread, not bunched.
    private var lastTurn: Date?
    /// The longest it waits for a reset.
    public let maxWait: TimeInterval
    private let log: Logger

    /// - Parameters:
    ///   - maxWait: the longest wait; the default covers Mastodon's 5-minute window.
    ///   - log: where each wait goes: a `debug` event `quota_wait` with the operation, the
    ///     requests remaining and the wait; a wait of a second or more also as a notice.
    public init(maxWait: TimeInterval = 900, log: Logger = .disabled) {
        self.maxWait = maxWait
        self.log = log
    }

    /// The one pacer of `account` on `server`'s origin among the feeds that share `resources`:
    /// the one place a pacer's key is made, so feeds of one account always meet at one pacer.
    ///
    ///     let pacer = RateLimitPacer.shared(for: server, account: username, in: context.shared, log: context.log)
    ///
    /// - Parameter account: who the server counts the quota for (a user name, a handle, an
    ///   access token), plus what else splits the server's count (`"… sessions"` for a login
    ///   endpoint with a quota of its own). It only keys memory: it is never printed.
    public static func shared(for server: URL, account: String, in resources: SharedResources,
                              log: Logger) -> RateLimitPacer {
        let origin = Origin(server)?.gateKey ?? server.absoluteString
        return resources.value(for: "rate-limit pacer \(origin) \(account)") { RateLimitPacer(log: log) }
    }

    /// Takes the next request's turn: the time it may be sent, `now` when the quota allows it.
    ///
    /// The request counts against the quota from here on, so every feed sharing the pacer
    /// sees it before the server's answer says so.
    /// - Throws: ``Core/ServiceError`` `.rateLimited` when the turn is further away than ``maxWait``.
    public func turn(_ operation: String, now: Date = Date()) throws -> Date {
        guard let remaining, let resetAt else { return now }
        let untilReset = resetAt.timeIntervalSince(now)
        guard untilReset > 0 else {
            // The window is over; what is left of the new one is known from the next answer.
            self.remaining = nil
            return now
        }
        let turn: Date
        if remaining <= 0 {
            turn = resetAt
        } else if let limit, remaining * 10 < limit {
            turn = max(now, lastTurn ?? now).addingTimeInterval(untilReset / Double(remaining + 1))
        } else {
            self.remaining = remaining - 1
            return now
        }
        let wait = turn.timeIntervalSince(now)
        guard wait <= maxWait else {
            throw ServiceError(.rateLimited(until: resetAt), operation,
                               "the request quota is spent until \(resetAt.formatted(.iso8601)), more than \(Int(maxWait)) s away")
        }
        log.debug("quota_wait", ["operation": operation, "remaining": String(remaining), "wait_ms": String(Int((wait * 1000).rounded(.up)))])
        if wait >= 1 { log.notice("\(operation): the server's request quota is \(remaining <= 0 ? "spent" : "nearly spent"); waiting \(Int(wait.rounded(.up))) s") }
        if remaining > 0 { self.remaining = remaining - 1 }
        lastTurn = turn
        return turn
    }

    /// Notes the quota a response reports, if it reports one.
    public func record(_ response: HTTPResponse, now: Date = Date()) {
        if let quota = Self.quota(in: response, now: now) {
            (limit, remaining, resetAt) = quota
        }
    }

    /// The quota a response announces: limit (if said), requests remaining, and the reset.
    public static func quota(in response: HTTPResponse, now: Date = Date()) -> (limit: Int?, remaining: Int, reset: Date?)? {
        for prefix in ["x-ratelimit-", "ratelimit-"] {
            guard let remaining = response.header(prefix + "remaining").flatMap(count) else { continue }
            let reset = response.header(prefix + "reset").flatMap {
                prefix == "ratelimit-" ? secondsFromNow($0, now: now) : resetDate($0, now: now)
            }
            return (response.header(prefix + "limit").flatMap(count), remaining, reset)
        }
        // The draft's single field: `limit=100, remaining=0, reset=30`.
        if let field = response.header("ratelimit") {
            var values: [String: String] = [:]
            for part in field.split(whereSeparator: { $0 == "," || $0 == ";" }) {
                let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                if pair.count == 2 { values[pair[0]] = pair[1] }
            }
            if let remaining = (values["remaining"] ?? values["r"]).flatMap(count) {
                return ((values["limit"] ?? values["l"]).flatMap(count), remaining,
                        (values["reset"] ?? values["t"]).flatMap { secondsFromNow($0, now: now) })
            }
        }
        return nil
    }

    /// When a `429` may be retried: `Retry-After`, else the announced reset.
    public static func retryDate(for response: HTTPResponse, now: Date = Date()) -> Date? {
        if let value = response.header("Retry-After"), let date = HTTPDate.retryAfter(value, now: now) { return date }
        return quota(in: response, now: now)?.reset
    }

    /// `X-RateLimit-Reset` as a date: Unix seconds, seconds from now (small numbers), or RFC 3339.
    public static func resetDate(_ text: String, now: Date = Date()) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = Double(trimmed), number.isFinite, number >= 0 {
            guard number > 1_000_000_000 else { return secondsFromNow(trimmed, now: now) }
            return number < 100_000_000_000 ? Date(timeIntervalSince1970: number) : nil
        }
        return RFC3339.date(from: trimmed)
    }

    /// A count of requests: a whole number within reason, or `nil`.
    private static func count(_ text: String) -> Int? {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), (0...100_000_000).contains(value) else { return nil }
        return value
    }

    /// Seconds from now, up to a day; anything larger or stranger is ignored.
    private static func secondsFromNow(_ text: String, now: Date) -> Date? {
        guard let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds.isFinite, (0...86_400).contains(seconds) else { return nil }
        return now.addingTimeInterval(seconds)
    }
}
