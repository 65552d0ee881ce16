import Foundation
import Sync
import Testing

/// A fixed-sequence generator, so jitter is reproducible in tests.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct RetryScheduleTests {
    @Test func aHealthyFeedWaitsItsIntervalWithinTenPercent() {
        var random = SeededRandom(state: 1)
        let schedule = RetrySchedule(interval: 300)
        let delays = (0..<1000).map { _ in schedule.delay(afterConsecutiveFailures: 0, using: &random) }
        #expect(delays.allSatisfy { (270...330).contains($0) })
        #expect(delays.min()! < 275 && delays.max()! > 325, "the jitter spreads over the whole band")
    }

    @Test func failuresBackOffExponentiallyUpToTheCap() {
        var random = SeededRandom(state: 2)
        let schedule = RetrySchedule(interval: 60, maxBackoff: 3600)
        let upper: [Int: Double] = [1: 60, 2: 120, 3: 240, 4: 480, 7: 3600, 30: 3600]
        for (failures, bound) in upper {
            let delays = (0..<200).map { _ in schedule.delay(afterConsecutiveFailures: failures, using: &random) }
            #expect(delays.allSatisfy { $0 <= bound && $0 >= bound / 2 }, "failure \(failures): \(delays.min()!)…\(delays.max()!)")
        }
    }

    @Test func theCapNeverShortensTheRegularInterval() {
        var random = SeededRandom(state: 3)
        let schedule = RetrySchedule(interval: 7200, maxBackoff: 60)
        #expect(schedule.delay(afterConsecutiveFailures: 5, using: &random) >= 3600)
    }
}
