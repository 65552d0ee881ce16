import Foundation
import ProcessTestSupport
import Sync
import Testing

/// A fixed-sequence generator (SplitMix64), so jitter is reproducible in tests.
/// The one backoff, with the settings of its three users: a sync's retries, a failing feed's
/// next run, a live stream's reconnects.
@Suite struct BackoffTests {
    static let retries = SyncEngine.Options().retryBackoff
    static let feedRuns = RetrySchedule(interval: 60, maxBackoff: 3600).backoff
    static let reconnects = Backoff(first: 1, cap: 300, jitter: .upperHalf)

    /// (backoff, failures in a row, the least and the most it may wait).
    static let table: [(Backoff, Int, ClosedRange<Double>)] = [
        (retries, 1, 0...0.25), (retries, 2, 0...0.5), (retries, 5, 0...4), (retries, 6, 0...8), (retries, 40, 0...8),
        (feedRuns, 1, 30...60), (feedRuns, 2, 60...120), (feedRuns, 3, 120...240), (feedRuns, 4, 240...480),
        (feedRuns, 7, 1800...3600), (feedRuns, 30, 1800...3600), (feedRuns, Int.max, 1800...3600),
        (reconnects, 1, 0.5...1), (reconnects, 2, 1...2), (reconnects, 9, 128...256), (reconnects, 10, 150...300),
        (reconnects, 1000, 150...300),
        // Fewer than one failure reads as the first.
        (reconnects, 0, 0.5...1), (retries, -3, 0...0.25),
    ]

    @Test func eachWaitIsDrawnBelowItsCeilingAndSpreadsOverItsBand() {
        var random = SeededRandom(state: 7)
        for (backoff, failures, band) in Self.table {
            #expect(backoff.ceiling(afterFailures: failures) == band.upperBound, "\(backoff) after \(failures)")
            let waits = (0..<400).map { _ in backoff.delay(afterFailures: failures, using: &random) }
            #expect(waits.allSatisfy(band.contains), "\(backoff) after \(failures): \(waits.min()!)…\(waits.max()!)")
            let width = band.upperBound - band.lowerBound
            #expect(waits.min()! < band.lowerBound + width / 10 && waits.max()! > band.upperBound - width / 10,
                    "the jitter covers the band: \(backoff) after \(failures)")
        }
    }

    @Test func theSameSeedDrawsTheSameWaits() {
        var first = SeededRandom(state: 42)
        var second = SeededRandom(state: 42)
        let a = (1...20).map { Self.reconnects.delay(afterFailures: $0, using: &first) }
        let b = (1...20).map { Self.reconnects.delay(afterFailures: $0, using: &second) }
        #expect(a == b)
        #expect(Set(a).count == 20, "draws differ one from the next")
    }

    @Test func aZeroFirstWaitNeverWaits() {
        var random = SeededRandom(state: 1)
        let none = Backoff(first: 0, cap: 10, jitter: .upperHalf)
        #expect([1, 64, 65, Int.max].map { none.delay(afterFailures: $0, using: &random) } == [0, 0, 0, 0])
    }
}
