import Foundation
import ProcessTestSupport
import Sync
import Testing

/// A feed's next run: its interval with jitter after a success; after failures, the
/// ``Backoff`` that ``BackoffTests`` covers, starting at the interval.
@Suite struct RetryScheduleTests {
    @Test func aHealthyFeedWaitsItsIntervalWithinTenPercent() {
        var random = SeededRandom(state: 1)
        let schedule = RetrySchedule(interval: 300)
        let delays = (0..<1000).map { _ in schedule.delay(afterConsecutiveFailures: 0, using: &random) }
        #expect(delays.allSatisfy { (270...330).contains($0) })
        #expect(delays.min()! < 275 && delays.max()! > 325, "the jitter spreads over the whole band")
    }

    @Test func failuresWaitByTheBackoffFromTheInterval() {
        var random = SeededRandom(state: 2)
        var same = SeededRandom(state: 2)
        let schedule = RetrySchedule(interval: 60, maxBackoff: 3600)
        #expect(schedule.backoff == Backoff(first: 60, cap: 3600, jitter: .upperHalf))
        for failures in 1...12 {
            #expect(schedule.delay(afterConsecutiveFailures: failures, using: &random)
                    == schedule.backoff.delay(afterFailures: failures, using: &same))
        }
    }

    @Test func theCapNeverShortensTheRegularInterval() {
        var random = SeededRandom(state: 3)
        let schedule = RetrySchedule(interval: 7200, maxBackoff: 60)
        #expect(schedule.delay(afterConsecutiveFailures: 5, using: &random) >= 3600)
    }
}
