import Core
import Foundation
import Testing

/// ISO 8601 (proleptic Gregorian, UTC): the day counts are Python's `date.toordinal()` minus
/// 1970-01-01's, which counts in the proleptic Gregorian calendar; year 0 and before follow
/// from it (year 0 is a leap year: 366 days before 0001-01-01).
@Suite struct ISO8601TimestampTests {
    static let table: [(days: Int64, text: String)] = [
        (0, "1970-01-01"), (-1, "1969-12-31"),
        (-719_162, "0001-01-01"), (-719_528, "0000-01-01"), (-719_529, "-0001-12-31"), (-719_893, "-0001-01-01"),
        (-171_605, "1500-03-01"),
        // Across the Gregorian switch: Foundation's calendar turns Julian before 1582-10-15.
        (-141_438, "1582-10-04"), (-141_427, "1582-10-15"), (-141_428, "1582-10-14"),
        // Leap days: every 4th year, not every 100th, yet every 400th.
        (-135_081, "1600-02-29"), (-98_557, "1700-02-28"), (-98_556, "1700-03-01"), (-25_508, "1900-03-01"),
        (11_016, "2000-02-29"), (19_782, "2024-02-29"), (2_932_896, "9999-12-31"), (2_932_897, "+10000-01-01"),
    ]

    @Test func daysPrintAsTheirProlepticGregorianDate() {
        for (days, text) in Self.table {
            let date = Date(timeIntervalSince1970: Double(days) * 86_400)
            #expect(ISO8601Timestamp.string(from: date) == text + "T00:00:00Z", "\(days)")
        }
    }

    @Test func dateAndDayCountRoundTripOverEveryDayOfTwoThousandSevenHundredYears() {
        // From 0001 BC, over the switch of 1582, to 2654.
        var previous = ISO8601Timestamp.civilDate(daysSince1970: -720_000)
        for days in Int64(-719_999)...Int64(250_000) {
            let date = ISO8601Timestamp.civilDate(daysSince1970: days)
            #expect(ISO8601Timestamp.daysSince1970(year: date.year, month: date.month, day: date.day) == days)
            // The next day: the day after, or the 1st of the next month, or of the next year.
            let next = date.day == previous.day + 1 && date.month == previous.month && date.year == previous.year
                || date.day == 1 && (date.month == previous.month + 1 && date.year == previous.year
                                     || date.month == 1 && previous.month == 12 && date.year == previous.year + 1)
            if !next { Issue.record("\(previous) is followed by \(date)"); return }
            previous = date
        }
    }

    @Test func timesOfDayAndMilliseconds() {
        let cases: [(Double, String)] = [
            (1_769_860_800, "2026-01-31T12:00:00Z"), (1.25, "1970-01-01T00:00:01.250Z"), (-0.001, "1969-12-31T23:59:59.999Z"),
            (-1, "1969-12-31T23:59:59Z"), (86_399, "1970-01-01T23:59:59Z"),
            (-62_167_219_200, "0000-01-01T00:00:00Z"), (-62_167_219_200.5, "-0001-12-31T23:59:59.500Z"),
        ]
        for (seconds, text) in cases {
            #expect(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: seconds)) == text, "\(seconds)")
        }
        // Beyond what the store holds, the text is clamped at ±2^60 ms, never trapped on.
        let far = ISO8601Timestamp.string(from: .distantFuture.addingTimeInterval(1e300))
        #expect(far.hasPrefix("+") && far.hasSuffix("Z") && far == ISO8601Timestamp.string(from: Date(timeIntervalSince1970: Double(1 << 60) / 1000)))
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: -.infinity)).hasPrefix("-"))
    }
}
