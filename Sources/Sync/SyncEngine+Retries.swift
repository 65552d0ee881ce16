import Core
import Foundation

/// The retry policy of a sync's backend calls: rate limits waited out as the server asks,
/// transient failures retried by ``Options/retryBackoff``, each retry logged.
extension SyncEngine {
    /// Runs a backend call, waiting out rate limits and retrying transient failures
    /// (unreachable, 5xx, truncated or malformed answers) after waits of ``Options/retryBackoff``,
    /// within the budget of ``Options/maxAttempts``.
    func withRetries<T>(_ call: () async throws -> T) async throws -> T {
        var failures = 0
        var rateLimitWaits = 0
        var random = SystemRandomNumberGenerator()
        while true {
            do {
                return try await call()
            } catch let error as ServiceError {
                switch error.code {
                case .rateLimited(let until) where rateLimitWaits < options.maxRateLimitRetries:
                    let wait = max(0, until.map { $0.timeIntervalSince(now()) } ?? 1)
                    guard wait <= options.maxRateLimitWait else { throw error }
                    rateLimitWaits += 1
                    logRetry(error, attempt: rateLimitWaits, wait: wait)
                    if wait >= 1 { options.log.notice("\(error.operation): rate limited; waiting \(Int(wait.rounded(.up))) s as the server asks") }
                    try await sleep(wait)
                case .unavailable, .invalidResponse:
                    failures += 1
                    guard failures < options.maxAttempts else {
                        throw ServiceError(error.code, error.operation, "\(error.reason); gave up after \(failures) attempts")
                    }
                    let wait = options.retryBackoff.delay(afterFailures: failures, using: &random)
                    logRetry(error, attempt: failures, wait: wait)
                    try await sleep(wait)
                default:
                    throw error
                }
            }
        }
    }

    /// Logs a retry at `debug`: which call failed how, the how-manyth retry of its kind this is
    /// (`attempt` 1 is the first retry) and how long it waits first.
    private func logRetry(_ error: ServiceError, attempt: Int, wait: TimeInterval) {
        options.log.debug("retry", ["feed": feed, "operation": error.operation, "attempt": "\(attempt)",
                                    "wait_ms": "\(Int((wait * 1000).rounded()))", "reason": error.reason])
    }
}
