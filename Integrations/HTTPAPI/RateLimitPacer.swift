import Core
import Foundation

/// Paces requests by the server's `X-RateLimit-Remaining` / `X-RateLimit-Reset`: when the
/// quota is spent, the next request waits for the reset instead of drawing a `429`.
actor RateLimitPacer {
    private var remaining: Int?
    private var resetAt: Date?
    /// The longest it waits for a reset; past that the request fails as rate limited.
    let maxWait: TimeInterval
    private let sleep: @Sendable (TimeInterval) async throws -> Void

    init(maxWait: TimeInterval = 120,
         sleep: @escaping @Sendable (TimeInterval) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }) {
        self.maxWait = maxWait
        self.sleep = sleep
    }

    /// Waits until the quota allows a request.
    /// - Throws: ``ServiceError`` `.rateLimited` when the reset is further away than `maxWait`.
    func waitForQuota(_ operation: String) async throws {
        guard let remaining, remaining <= 0, let resetAt else { return }
        let wait = resetAt.timeIntervalSinceNow
        guard wait > 0 else {
            self.remaining = nil
            return
        }
        guard wait <= maxWait else {
            throw ServiceError(.rateLimited(until: resetAt), operation, "the request quota is spent until \(resetAt.formatted(.iso8601))")
        }
        try await sleep(wait)
        self.remaining = nil
    }

    /// Notes the quota a response reports, if it reports one.
    func record(_ response: HTTPResponse) {
        guard let text = response.header("X-RateLimit-Remaining"), let value = Int(text.trimmingCharacters(in: .whitespaces)) else { return }
        remaining = value
        resetAt = response.header("X-RateLimit-Reset").flatMap { Self.resetDate($0) }
    }

    /// `X-RateLimit-Reset` as a date: Unix seconds, seconds from now (small numbers), or RFC 3339.
    static func resetDate(_ text: String, now: Date = Date()) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = Double(trimmed), number.isFinite, number >= 0 {
            return number > 1_000_000_000 ? Date(timeIntervalSince1970: number) : now.addingTimeInterval(number)
        }
        return RFC3339.date(from: trimmed)
    }
}
