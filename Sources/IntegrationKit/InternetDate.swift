import Foundation

/// The one parser of the dates integrations read: RFC 3339 (JSON APIs, Atom), RFC 822 / 2822
/// (RSS) and HTTP's dates (RFC 9110 §5.6.7). It reads bytes, with no formatter or calendar: it
/// runs for every post of every page.
///
/// Every form shares one check:
/// - a real date of the proleptic Gregorian calendar (`2026-02-30` and `2025-02-29` are refused,
///   never rolled over);
/// - hours 0–23, minutes 0–59, seconds 0–60 (a leap second reads as second 59);
/// - a zone offset of at most 23 hours and 59 minutes either way: RFC 3339 §5.6 has
///   `time-numoffset = ("+" / "-") time-hour ":" time-minute` with `time-hour` 00–23 and
///   `time-minute` 00–59, and RFC 2822 §3.3 gives the same meaning to `+hhmm`, so `+2500`,
///   `-9999`, `+25:00` and `+0060` are refused.
///
/// A text that is not a date is `nil`, never a guess.
public enum InternetDate {
    /// An RFC 3339 §5.6 `date-time`, strictly: `2026-01-01T00:00:37Z`, `2026-01-01T00:00:37.250+02:00`.
    /// As §5.6 allows, `t` or a space may stand for `T`, and `z` for `Z`.
    public static func rfc3339(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes in
            var scanner = Scanner(bytes)
            return scanner.rfc3339(lenient: false)
        }
    }

    /// An RFC 2822 §3.3 `date-time` with the obsolete forms of RFC 822 §5 and RFC 2822 §4.3 that
    /// feeds and servers still send, and HTTP's two obsolete forms:
    /// - `Sat, 07 Sep 2002 00:00:01 GMT`, `7 Sep 02 9:05 EST`, `Tue, 10 Jun 2003 04:00:00 +0100`;
    /// - the day of the week is optional and not checked against the date (feeds get it wrong);
    /// - seconds are optional; a missing zone is GMT;
    /// - zones: `+hhmm` (also `+hh:mm`), `UT`, `UTC`, `GMT`, `Z`, the US zones `EST` … `PDT`,
    ///   and the military letters, which RFC 2822 §4.3 says to read as `-0000` (UTC);
    /// - a two-digit year is 2000–2049 for 00–49 and 1950–1999 for 50–99, a three-digit year
    ///   adds 1900 (RFC 2822 §4.3); years before 1900 are refused;
    /// - RFC 850's `Sunday, 06-Nov-94 08:49:37 GMT` and asctime's `Sun Nov  6 08:49:37 1994`.
    public static func rfc822(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes in
            var scanner = Scanner(bytes)
            return scanner.rfc822()
        }
    }

    /// A feed's date, whichever form it is in: RFC 822 (RSS), or RFC 3339 with the ISO 8601
    /// forms feeds write beside it (Atom, JSON Feed, `dc:date`): `2026-01-31`, `2026-01-31T12:00Z`,
    /// a time without a zone (read as UTC), a fraction after a comma.
    public static func feedDate(_ text: String) -> Date? {
        guard text.utf8.count <= 100 else { return nil }
        var text = text
        return text.withUTF8 { bytes in
            var scanner = Scanner(bytes)
            let isISO = bytes.count >= 10 && Scanner.isDigit(bytes[0]) && bytes[4] == UInt8(ascii: "-")
            return isISO ? scanner.rfc3339(lenient: true) : scanner.rfc822()
        }
    }

    /// The instant of a civil date and time `offset` seconds east of UTC; `nil` when any part is
    /// out of range.
    static func make(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, fraction: Double = 0,
                     offset: Int, minYear: Int) -> Date? {
        guard (minYear...9999).contains(year), (1...12).contains(month), (1...daysIn(month, of: year)).contains(day),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        let seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + min(second, 59) - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// A zone offset in seconds east of UTC, or `nil` beyond 23:59 or with 60 minutes or more.
    static func offset(sign: Int, hours: Int, minutes: Int) -> Int? {
        guard (0...23).contains(hours), (0...59).contains(minutes) else { return nil }
        return sign * (hours * 3_600 + minutes * 60)
    }

    static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// RFC 822's month names, by their first three letters, lower-cased.
    static func month(_ word: UnsafeBufferPointer<UInt8>.SubSequence) -> Int? {
        guard word.count >= 3 else { return nil }
        let i = word.startIndex
        let key = (UInt32(word[i] | 0x20) << 16) | (UInt32(word[i + 1] | 0x20) << 8) | UInt32(word[i + 2] | 0x20)
        switch key {
        case 0x6A616E: return 1    // jan
        case 0x666562: return 2    // feb
        case 0x6D6172: return 3    // mar
        case 0x617072: return 4    // apr
        case 0x6D6179: return 5    // may
        case 0x6A756E: return 6    // jun
        case 0x6A756C: return 7    // jul
        case 0x617567: return 8    // aug
        case 0x736570: return 9    // sep
        case 0x6F6374: return 10   // oct
        case 0x6E6F76: return 11   // nov
        case 0x646563: return 12   // dec
        default: return nil
        }
    }

    /// RFC 822's named zones (§5) and RFC 2822 §4.3's obsolete ones, in seconds east of UTC.
    /// `word` holds letters only.
    static func namedZone(_ word: UnsafeBufferPointer<UInt8>.SubSequence) -> Int? {
        guard (1...3).contains(word.count) else { return nil }
        let hours: Int
        switch String(decoding: word.map { $0 & 0xDF }, as: UTF8.self) {
        case "UT", "UTC", "GMT", "Z": hours = 0
        case "EST": hours = -5
        case "EDT": hours = -4
        case "CST": hours = -6
        case "CDT": hours = -5
        case "MST": hours = -7
        case "MDT": hours = -6
        case "PST": hours = -8
        case "PDT": hours = -7
        // Military letters A–I and K–Z: their signs were published reversed, so RFC 2822 §4.3
        // reads them all as -0000.
        case let letter where letter.utf8.count == 1 && letter != "J": hours = 0
        default: return nil
        }
        return hours * 3_600
    }
}

/// A forward scanner over a date's bytes.
private struct Scanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    var atEnd: Bool { index == bytes.count }

    mutating func skip(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Skips spaces and tabs; whether there were any.
    mutating func skipSpaces() -> Bool {
        let start = index
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        return index > start
    }

    /// Exactly `count` digits.
    mutating func number(_ count: Int) -> Int? {
        guard index + count <= bytes.count else { return nil }
        var value = 0
        for i in index..<(index + count) {
            guard Self.isDigit(bytes[i]) else { return nil }
            value = value * 10 + Int(bytes[i] - 0x30)
        }
        index += count
        return value
    }

    /// `minimum` to `maximum` digits, and how many there were.
    mutating func number(_ minimum: Int, to maximum: Int) -> (value: Int, digits: Int)? {
        var value = 0, digits = 0
        while digits < maximum, index < bytes.count, Self.isDigit(bytes[index]) {
            value = value * 10 + Int(bytes[index] - 0x30)
            index += 1
            digits += 1
        }
        return digits >= minimum ? (value, digits) : nil
    }

    /// The letters from here on.
    mutating func word() -> UnsafeBufferPointer<UInt8>.SubSequence {
        let start = index
        while index < bytes.count, (0x61...0x7A).contains(bytes[index] | 0x20) { index += 1 }
        return bytes[start..<index]
    }

    /// The digits of a fraction of a second, after its `.`: at least one.
    mutating func fraction() -> Double? {
        var fraction = 0.0, scale = 0.1, digits = 0
        while index < bytes.count, Self.isDigit(bytes[index]) {
            fraction += Double(bytes[index] - 0x30) * scale
            scale /= 10
            index += 1
            digits += 1
        }
        return digits > 0 ? fraction : nil
    }

    /// RFC 3339 `date-time`; `lenient` adds the ISO 8601 forms feeds use.
    mutating func rfc3339(lenient: Bool) -> Date? {
        guard let year = number(4), skip(UInt8(ascii: "-")), let month = number(2), skip(UInt8(ascii: "-")),
              let day = number(2) else { return nil }
        var hour = 0, minute = 0, second = 0, fraction = 0.0, offset = 0
        if skip(UInt8(ascii: "T")) || skip(UInt8(ascii: "t")) || skip(UInt8(ascii: " ")) {
            guard let h = number(2), skip(UInt8(ascii: ":")), let m = number(2) else { return nil }
            (hour, minute) = (h, m)
            if skip(UInt8(ascii: ":")) {
                guard let s = number(2) else { return nil }
                second = s
                if skip(UInt8(ascii: ".")) || (lenient && skip(UInt8(ascii: ","))) {
                    guard let f = self.fraction() else { return nil }
                    fraction = f
                }
            } else if !lenient {
                return nil
            }
            if skip(UInt8(ascii: "Z")) || skip(UInt8(ascii: "z")) {
                offset = 0
            } else if let sign = skip(UInt8(ascii: "+")) ? 1 : skip(UInt8(ascii: "-")) ? -1 : nil {
                // `+hh:mm`; leniently also `+hhmm` and `+hh`.
                guard let hours = number(2) else { return nil }
                var minutes = 0
                if skip(UInt8(ascii: ":")) {
                    guard let m = number(2) else { return nil }
                    minutes = m
                } else {
                    guard lenient else { return nil }
                    minutes = number(2) ?? 0
                }
                guard let zone = InternetDate.offset(sign: sign, hours: hours, minutes: minutes) else { return nil }
                offset = zone
            } else if !lenient {
                return nil
            }
        } else if !lenient {
            return nil
        }
        guard atEnd else { return nil }
        return InternetDate.make(year: year, month: month, day: day, hour: hour, minute: minute, second: second,
                                 fraction: fraction, offset: offset, minYear: lenient ? 1900 : 0)
    }

    /// RFC 822 / 2822 and HTTP's obsolete forms (see ``InternetDate/rfc822(_:)``).
    mutating func rfc822() -> Date? {
        _ = skipSpaces()
        var asctimeMonth: Int?
        if index < bytes.count, (0x61...0x7A).contains(bytes[index] | 0x20) {
            let first = word()
            if let month = InternetDate.month(first), first.count == 3, skipSpaces(), index < bytes.count, Scanner.isDigit(bytes[index]) {
                asctimeMonth = month       // asctime without its weekday
            } else {
                // The day of the week, never checked against the date (`Tue,`, `Tuesday`, `Tue.,`).
                _ = skip(UInt8(ascii: "."))
                _ = skip(UInt8(ascii: ","))
                _ = skipSpaces()
                if index < bytes.count, (0x61...0x7A).contains(bytes[index] | 0x20) {
                    guard let month = InternetDate.month(word()), skipSpaces() else { return nil }
                    asctimeMonth = month
                }
            }
        }
        let day: Int, month: Int, year: Int
        var yearDigits = 4
        if let asctime = asctimeMonth {
            // asctime: `Nov  6 08:49:37 1994`.
            guard let d = number(1, to: 2), skipSpaces(), let time = time(), skipSpaces(), let y = number(4) else { return nil }
            _ = skipSpaces()
            guard atEnd else { return nil }
            return InternetDate.make(year: y, month: asctime, day: d.value, hour: time.hour, minute: time.minute, second: time.second,
                                     offset: 0, minYear: 1900)
        }
        guard let d = number(1, to: 2) else { return nil }
        day = d.value
        if skip(UInt8(ascii: "-")) {
            // RFC 850: `06-Nov-94`.
            guard let m = InternetDate.month(word()), skip(UInt8(ascii: "-")), let y = number(2, to: 4) else { return nil }
            (month, year, yearDigits) = (m, y.value, y.digits)
        } else {
            guard skipSpaces(), let m = InternetDate.month(word()), skipSpaces(), let y = number(2, to: 4) else { return nil }
            (month, year, yearDigits) = (m, y.value, y.digits)
        }
        let fullYear = switch yearDigits {
        case 2: year < 50 ? 2000 + year : 1900 + year
        case 3: 1900 + year
        default: year
        }
        guard skipSpaces(), let time = time() else { return nil }
        var offset = 0
        if skipSpaces(), !atEnd, bytes[index] != UInt8(ascii: "(") {
            if let sign = skip(UInt8(ascii: "+")) ? 1 : skip(UInt8(ascii: "-")) ? -1 : nil {
                guard let hours = number(2) else { return nil }
                _ = skip(UInt8(ascii: ":"))
                guard let minutes = number(2), let zone = InternetDate.offset(sign: sign, hours: hours, minutes: minutes) else { return nil }
                offset = zone
            } else {
                guard let zone = InternetDate.namedZone(word()) else { return nil }
                offset = zone
            }
            _ = skipSpaces()
        }
        // A trailing comment, as RFC 2822's CFWS allows: `+0000 (UTC)`.
        if skip(UInt8(ascii: "(")) {
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") { index += 1 }
            guard skip(UInt8(ascii: ")")) else { return nil }
            _ = skipSpaces()
        }
        guard atEnd else { return nil }
        return InternetDate.make(year: fullYear, month: month, day: day, hour: time.hour, minute: time.minute,
                                 second: time.second, offset: offset, minYear: 1900)
    }

    /// `hh:mm[:ss]`, the hour with one or two digits as feeds write it.
    mutating func time() -> (hour: Int, minute: Int, second: Int)? {
        guard let hour = number(1, to: 2), skip(UInt8(ascii: ":")), let minute = number(2) else { return nil }
        var second = 0
        if skip(UInt8(ascii: ":")) {
            guard let s = number(2) else { return nil }
            second = s
        }
        return (hour.value, minute, second)
    }
}
