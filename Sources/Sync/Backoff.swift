import Foundation

/// Exponential backoff with jitter: how long to wait after the n-th failure in a row. The one
/// backoff of feedsync — a sync's retries of a failed call, a failing feed's next run
/// (``RetrySchedule``), and a live stream's reconnects all wait by it.
///
/// The n-th failure's ceiling is `first × 2^(n-1)`, capped at ``cap``; the wait is drawn from
/// ``Jitter-swift.enum`` below that ceiling. Jitter keeps clients that failed together from
/// retrying together.
///
///     let backoff = Backoff(first: 1, cap: 300, jitter: .upperHalf)
///     var random = SystemRandomNumberGenerator()
///     let wait = backoff.delay(afterFailures: 3, using: &random)   // 2 to 4 s
public struct Backoff: Sendable, Equatable {
    /// Where in the ceiling a wait is drawn.
    public enum Jitter: Sendable, Equatable {
        /// Anywhere from 0 to the ceiling ("full jitter"): the most spread, for retries in a burst.
        case full
        /// From half the ceiling to the ceiling: a wait that still grows, for reconnects and runs.
        case upperHalf
    }

    /// The first failure's ceiling.
    public var first: TimeInterval
    /// The longest ceiling, whatever the failures.
    public var cap: TimeInterval
    public var jitter: Jitter

    public init(first: TimeInterval, cap: TimeInterval, jitter: Jitter) {
        self.first = first
        self.cap = cap
        self.jitter = jitter
    }

    /// The longest wait after `failures` failures in a row: `first × 2^(failures-1)`, at most
    /// ``cap``. Fewer than one failure reads as one.
    public func ceiling(afterFailures failures: Int) -> TimeInterval {
        // 2^64 times any first wait is past any cap, and still a finite number.
        let exponent = Double(min(max(failures, 1) - 1, 64))
        return min(cap, first * pow(2, exponent))
    }

    /// The wait after `failures` failures in a row, drawn with `random` below the ceiling.
    ///
    /// - Parameter random: the system's generator in use, a seeded one in tests.
    public func delay(afterFailures failures: Int, using random: inout some RandomNumberGenerator) -> TimeInterval {
        let ceiling = ceiling(afterFailures: failures)
        switch jitter {
        case .full: return Double.random(in: 0...ceiling, using: &random)
        case .upperHalf: return Double.random(in: ceiling / 2...ceiling, using: &random)
        }
    }
}
