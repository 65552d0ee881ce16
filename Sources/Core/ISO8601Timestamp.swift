import Foundation

/// The one way feedsync writes a time for people and tools: ISO 8601 in UTC with `Z`, in the
/// proleptic Gregorian calendar, to the second, with milliseconds when there are any.
///
///     ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 0))      // "1970-01-01T00:00:00Z"
///     ISO8601Timestamp.string(from: Date(timeIntervalSince1970: 1.25))   // "1970-01-01T00:00:01.250Z"
///
/// Foundation's Gregorian calendar turns Julian before 1582-10-15, so a post stored as
/// 1500-03-01 would print as 1500-02-20; this computes the civil date from the day count
/// itself (Howard Hinnant's `civil_from_days`), the way ISO 8601 and RFC 3339 count.
/// Years 0 to 9999 have four digits (year 0 is 1 BC); others a sign and at least four
/// digits (`-0001`, `+10000`), ISO 8601's expanded form. Times are taken to the millisecond,
/// as the store keeps them.
public enum ISO8601Timestamp {
    /// `date` as `2026-01-31T12:00:00Z` (or `…:00.250Z`).
    public static func string(from date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `date`'s text to `bytes`: the encoders of an export call this a million times.
    public static func append(_ date: Date, to bytes: inout [UInt8]) {
        append(milliseconds: milliseconds(date), to: &bytes)
    }

    /// Appends the time `milliseconds` after 1970-01-01T00:00:00Z: composed on the stack and
    /// appended once (the encoders of an export write two a post).
    public static func append(milliseconds: Int64, to bytes: inout [UInt8]) {
        // Past ±2^60 ms (±36 million years) the text is clamped; no arithmetic below can overflow.
        let milliseconds = min(max(milliseconds, -(1 << 60)), 1 << 60)
        let day = floorDivision(milliseconds, 86_400_000)
        let inDay = milliseconds - day * 86_400_000
        let (year, month, dayOfMonth) = civilDate(daysSince1970: day)
        let seconds = inDay / 1000
        // At most a sign, 8 digits of year and "-MM-DDTHH:MM:SS.mmmZ": 29 bytes.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { text in
            var count = 0
            func put(_ byte: UInt8) {
                text[count] = byte
                count += 1
            }
            func digits(_ value: UInt64, _ width: Int) {
                var length = 1
                var power: UInt64 = 10
                while length < 20, value >= power {
                    length += 1
                    power = power &* 10
                }
                length = max(length, width)
                var rest = value
                for position in stride(from: count + length - 1, through: count, by: -1) {
                    text[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                count += length
            }
            if !(0...9999).contains(year) { put(year < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")) }
            digits(year.magnitude, 4)
            put(UInt8(ascii: "-"))
            digits(UInt64(month), 2)
            put(UInt8(ascii: "-"))
            digits(UInt64(dayOfMonth), 2)
            put(UInt8(ascii: "T"))
            digits(UInt64(seconds / 3600), 2)
            put(UInt8(ascii: ":"))
            digits(UInt64(seconds / 60 % 60), 2)
            put(UInt8(ascii: ":"))
            digits(UInt64(seconds % 60), 2)
            if inDay % 1000 != 0 {
                put(UInt8(ascii: "."))
                digits(UInt64(inDay % 1000), 3)
            }
            put(UInt8(ascii: "Z"))
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<count]))
        }
    }

    /// `date` in whole milliseconds since 1970, rounded as the store rounds, clamped when huge.
    public static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return value > 0 ? .max : .min }
        return Int64(exactly: value) ?? (value > 0 ? .max : .min)
    }

    /// The proleptic Gregorian (year, month, day) of the day `days` after 1970-01-01.
    /// Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms", `civil_from_days`.
    public static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468                      // days since 0000-03-01
        let era = floorDivision(shifted, 146_097)         // 400-year eras
        let dayOfEra = shifted - era * 146_097            // [0, 146096]
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)   // from March 1
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The day count since 1970-01-01 of a proleptic Gregorian date (`days_from_civil`).
    public static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = floorDivision(year, 400)
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
