/// HTML's character references, as the WHATWG HTML standard reads them (§13.2.5.72–80,
/// "character reference state" and after): the one entity table of feedsync, for the HTML
/// renderer (``HTMLText``), for the HTML names a web feed's XML uses, and for attribute values.
///
/// - Named: the longest name of the standard's table (2,231 names, ``namedTable``) that the
///   text starts with. A name must end with `;`, except the 106 legacy names (`&amp`, `&copy`,
///   `&eacute`…) that may end without one: `&copy 2026` is `© 2026`, `&notit;` is `¬it;`. In an
///   attribute value, a legacy name without `;` followed by `=` or a letter or digit is not a
///   reference (`?a=1&copy=2` keeps its `&copy`).
/// - Numeric: `&#` decimal digits or `&#x` hexadecimal digits, `;` optional. NUL, a surrogate or
///   a number past U+10FFFF is U+FFFD; 0x80–0x9F is read as windows-1252 (`&#150;` is `–`);
///   any other number is its code point, controls and noncharacters included.
/// - Anything else (`&`, `&#;`, `&#x;`, `&bogus;`) is no reference: the `&` is text.
///
/// A reference is at most 33 bytes of name (the longest is `&CounterClockwiseContourIntegral;`)
/// or a run of digits, so reading one is linear in what it consumes.
public enum HTMLEntities {
    /// What a reference stands for: one scalar, or two (`&nGt;` is U+226B U+20D2).
    public struct Value: Hashable, Sendable {
        public var first: Unicode.Scalar
        public var second: Unicode.Scalar?
    }

    /// The reference that starts at `start` (an `&`) and the index after it; `nil` when the `&`
    /// starts none and is text.
    ///
    /// - Parameter inAttribute: read as in an attribute value, where a legacy name without `;`
    ///   followed by `=` or a letter or digit is no reference.
    public static func reference(in bytes: UnsafeBufferPointer<UInt8>, at start: Int, inAttribute: Bool = false) -> (Value, end: Int)? {
        let count = bytes.count
        var index = start + 1
        guard index < count else { return nil }
        if bytes[index] == UInt8(ascii: "#") {
            index += 1
            let hexadecimal = index < count && bytes[index] | 0x20 == UInt8(ascii: "x")
            if hexadecimal { index += 1 }
            let digitsStart = index
            var number: UInt32 = 0
            while index < count, let digit = digitValue(bytes[index], hexadecimal: hexadecimal) {
                // Past U+10FFFF every number reads the same (U+FFFD): stop growing, keep consuming.
                number = min(number &* (hexadecimal ? 16 : 10) &+ digit, 0x110000)
                index += 1
            }
            guard index > digitsStart else { return nil }
            if index < count && bytes[index] == UInt8(ascii: ";") { index += 1 }
            return (Value(first: scalar(forNumber: number)), index)
        }
        // The letters and digits a name can hold; the longest name has 31.
        var end = index
        while end < count, end - index < 32, isAlphanumeric(bytes[end]) { end += 1 }
        guard end > index else { return nil }
        let table = NamedTable.shared
        if end < count, bytes[end] == UInt8(ascii: ";"), let value = table.value(UnsafeBufferPointer(rebasing: bytes[index...end])) {
            return (value, end + 1)
        }
        // A legacy name (at most 6 letters) that the text starts with, the longest first.
        for length in stride(from: min(end - index, 6), through: 2, by: -1) {
            guard let value = table.value(UnsafeBufferPointer(rebasing: bytes[index..<(index + length)])) else { continue }
            let after = index + length
            if inAttribute, after < count, bytes[after] == UInt8(ascii: "=") || isAlphanumeric(bytes[after]) { return nil }
            return (value, after)
        }
        return nil
    }

    /// `text` with every reference decoded, as in an attribute value (`inAttribute`) or in text.
    ///
    ///     HTMLEntities.decode("/feed?a=1&amp;b=2", inAttribute: true)    // "/feed?a=1&b=2"
    public static func decode(_ text: String, inAttribute: Bool = false) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        var text = text
        return text.withUTF8 { bytes in
            var out = String.UnicodeScalarView()
            var plainStart = 0
            var index = 0
            while index < bytes.count {
                guard bytes[index] == UInt8(ascii: "&"), let (value, end) = reference(in: bytes, at: index, inAttribute: inAttribute) else {
                    index += 1
                    continue
                }
                out.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[plainStart..<index]), as: UTF8.self).unicodeScalars)
                out.append(value.first)
                if let second = value.second { out.append(second) }
                index = end
                plainStart = end
            }
            out.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[plainStart...]), as: UTF8.self).unicodeScalars)
            return String(out)
        }
    }

    /// What `&name;` stands for, `name` given without `&` and `;`; `nil` for a name the standard
    /// does not list.
    public static func character(named name: String) -> String? {
        var key = name + ";"
        return key.withUTF8 { NamedTable.shared.value($0) }.map { value in
            String(String.UnicodeScalarView([value.first] + (value.second.map { [$0] } ?? [])))
        }
    }

    /// The scalar a numeric reference stands for (the standard's "numeric character reference
    /// end state").
    public static func scalar(forNumber number: UInt32) -> Unicode.Scalar {
        switch number {
        case 0, 0xD800...0xDFFF, 0x110000...: return "\u{FFFD}"
        case 0x80...0x9F: return windows1252[Int(number - 0x80)].flatMap(Unicode.Scalar.init) ?? Unicode.Scalar(number)!
        default: return Unicode.Scalar(number)!
        }
    }

    /// What windows-1252 puts at 0x80–0x9F, where the standard reads a numeric reference as that
    /// encoding's character; `nil` where it has none (the number stays a C1 control).
    private static let windows1252: [UInt32?] = [
        0x20AC, nil, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, nil, 0x017D, nil,
        nil, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, nil, 0x017E, 0x0178,
    ]

    private static func digitValue(_ byte: UInt8, hexadecimal: Bool) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f") where hexadecimal: return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F") where hexadecimal: return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): return true
        default: return false
        }
    }
}
