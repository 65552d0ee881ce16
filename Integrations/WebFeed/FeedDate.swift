import Foundation

/// Reads the dates feeds write: RFC 822 (RSS, with named zones, missing seconds, single-digit
/// days, two-digit years) and RFC 3339 / ISO 8601 (Atom, JSON Feed, `dc:date`).
///
/// A date it cannot read is `nil`, never a guess: the item then keeps its first-seen time.
enum FeedDate {
    /// Either form, whichever the text is.
    static func date(from text: String?) -> Date? {
        guard let text = text.map(FeedText.trimmed), !text.isEmpty, text.utf8.count <= 100 else { return nil }
        if let first = text.utf8.first, first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9"),
           text.utf8.count >= 10, text.utf8.dropFirst(4).first == UInt8(ascii: "-") {
            return iso8601(text)
        }
        return rfc822(text)
    }

    /// `2026-01-31T12:00:00Z`, `2026-01-31T12:00:00.123+01:00`, `2026-01-31T12:00Z`, `2026-01-31`.
    static func iso8601(_ text: String) -> Date? {
        var scanner = Digits(Array(text.utf8))
        guard let year = scanner.number(4), scanner.skip("-"), let month = scanner.number(2), scanner.skip("-"),
              let day = scanner.number(2) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offset = 0
        if scanner.skip("T") || scanner.skip("t") || scanner.skip(" ") {
            guard let h = scanner.number(2), scanner.skip(":"), let m = scanner.number(2) else { return nil }
            (hour, minute) = (h, m)
            if scanner.skip(":") {
                guard let s = scanner.number(2) else { return nil }
                second = s
                if scanner.skip(".") || scanner.skip(",") {
                    var scale = 0.1
                    while let digit = scanner.digit() { fraction += Double(digit) * scale; scale /= 10 }
                }
            }
            if scanner.skip("Z") || scanner.skip("z") {
                offset = 0
            } else if let sign = scanner.sign() {
                guard let oh = scanner.number(2) else { return nil }
                _ = scanner.skip(":")
                let om = scanner.number(2) ?? 0
                offset = sign * (oh * 3600 + om * 60)
            }
        }
        guard scanner.atEnd else { return nil }
        return make(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
            .map { $0.addingTimeInterval(fraction) }
    }

    /// `Sat, 07 Sep 2002 00:00:01 GMT`, `7 Sep 02 9:05 EST`, `Tue, 10 Jun 2003 04:00:00 +0100`.
    static func rfc822(_ text: String) -> Date? {
        var words = text.split(whereSeparator: { $0 == " " || $0 == "," })
        // The day of the week is optional, and never checked against the date (feeds get it wrong).
        if let first = words.first, first.first?.isLetter == true { words.removeFirst() }
        guard words.count >= 4, let day = Int(words[0]), (1...31).contains(day),
              let month = months[String(words[1].prefix(3)).lowercased()], var year = Int(words[2]) else { return nil }
        if words[2].count == 2 { year += year < 50 ? 2000 : 1900 }
        let time = words[3].split(separator: ":").map { Int($0) }
        guard time.count == 2 || time.count == 3, time.allSatisfy({ $0 != nil }) else { return nil }
        let zone = words.count > 4 ? String(words[4]) : "GMT"
        guard let offset = zoneOffset(zone) else { return nil }
        return make(year: year, month: month, day: day, hour: time[0]!, minute: time[1]!,
                    second: time.count == 3 ? time[2]! : 0, offset: offset)
    }

    private static let months = ["jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
                                 "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12]

    private static let namedZones = ["UT": 0, "UTC": 0, "GMT": 0, "Z": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5,
                                     "MST": -7, "MDT": -6, "PST": -8, "PDT": -7]

    /// RFC 822's zones: `+hhmm`, the US names, UT/GMT/Z, and the military letters.
    private static func zoneOffset(_ zone: String) -> Int? {
        if let hours = namedZones[zone.uppercased()] { return hours * 3600 }
        if let sign = zone.first, sign == "+" || sign == "-" {
            let digits = String(zone.dropFirst().filter { $0 != ":" })
            guard digits.count == 4, let value = Int(digits) else { return nil }
            return (sign == "-" ? -1 : 1) * ((value / 100) * 3600 + (value % 100) * 60)
        }
        // RFC 822's military zones are famously reversed in practice; as RFC 2822 advises, read them as UTC.
        if zone.count == 1, zone.first?.isLetter == true { return 0 }
        return nil
    }

    /// The instant of a civil date and time at `offset` seconds east of UTC; `nil` when out of range.
    static func make(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offset: Int) -> Date? {
        guard (1900...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        let monthDays = [31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= monthDays[month - 1] else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm), so no Calendar is needed.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// A little scanner over ASCII digits and punctuation.
    private struct Digits {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func digit() -> Int? {
            guard index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 else { return nil }
            defer { index += 1 }
            return Int(bytes[index] - 48)
        }

        mutating func number(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }

        mutating func skip(_ character: Character) -> Bool {
            guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        mutating func sign() -> Int? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}
