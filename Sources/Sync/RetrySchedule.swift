import Foundation

/// When a feed syncs next: on its interval with ±10% jitter after a success, and by its
/// ``backoff`` after failures.
///
/// Jitter keeps feeds that failed together from retrying together. A failing feed is never
/// given up on; one success brings it back to its interval.
public struct RetrySchedule: Sendable, Equatable {
    public var interval: TimeInterval
    /// The longest wait between retries; the interval itself is never shortened by it.
    public var maxBackoff: TimeInterval
    /// The fraction by which a regular interval varies either way.
    public var jitter: Double

    public init(interval: TimeInterval, maxBackoff: TimeInterval = 3600, jitter: Double = 0.1) {
        self.interval = interval
        self.maxBackoff = maxBackoff
        self.jitter = jitter
    }

    /// The waits after failures: the n-th failure in a row waits `interval × 2^(n-1)`, capped at
    /// ``maxBackoff`` (or at the interval, when that is longer), times a random factor in [0.5, 1].
    public var backoff: Backoff {
        Backoff(first: interval, cap: max(maxBackoff, interval), jitter: .upperHalf)
    }

    /// The delay before the next sync.
    ///
    /// - Parameter consecutiveFailures: 0 after a success; n after the n-th failure in a row
    ///   (see ``backoff``).
    public func delay(afterConsecutiveFailures consecutiveFailures: Int, using random: inout some RandomNumberGenerator) -> TimeInterval {
        guard consecutiveFailures > 0 else {
            return interval * Double.random(in: (1 - jitter)...(1 + jitter), using: &random)
        }
        return backoff.delay(afterFailures: consecutiveFailures, using: &random)
    }
}
