import Foundation

/// Parses RFC 3339 timestamps (`2026-01-01T00:00:37Z`, `…37.250+02:00`) without a formatter:
/// this runs for every post of every page.
///
/// Impossible calendar dates (`2026-02-30`, `2025-02-29`) are rejected rather than rolled over
/// into the next month, as a lenient formatter would.
public enum RFC3339 {
    public static func date(from text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        guard b.count >= 20 else { return nil }
        func number(_ start: Int, _ length: Int) -> Int? {
            var value = 0
            for i in start..<(start + length) {
                let digit = Int(b[i]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0, 4), b[4] == 45, let month = number(5, 2), b[7] == 45, let day = number(8, 2),
              b[10] == 84 || b[10] == 116 || b[10] == 32, let hour = number(11, 2), b[13] == 58,
              let minute = number(14, 2), b[16] == 58, let second = number(17, 2),
              (1...12).contains(month), (1...daysIn(month, of: year)).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if b[index] == 46 {
            index += 1
            var scale = 0.1
            let start = index
            while index < b.count, (48...57).contains(b[index]) {
                fraction += Double(b[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < b.count else { return nil }
        var offset = 0
        switch b[index] {
        case 90, 122:
            index += 1
        case 43, 45:
            guard index + 6 == b.count, let hours = number(index + 1, 2), b[index + 3] == 58,
                  let minutes = number(index + 4, 2), hours < 24, minutes < 60 else { return nil }
            offset = (hours * 60 + minutes) * 60 * (b[index] == 45 ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    private static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
