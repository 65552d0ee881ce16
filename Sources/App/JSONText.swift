import Core
import Foundation

/// JSON written by hand into a byte buffer: what an export of a million posts needs, where
/// `JSONEncoder` cost five times the rest of the work.
///
/// Strings are escaped per RFC 8259: `"` and `\`, and every C0 control (`\n`, `\r`, `\t`, `\b`,
/// `\f` by name, the rest as `\u00XX`). DEL, the C1 controls and the Unicode bidirectional
/// overrides, which JSON allows raw, are escaped as `\uXXXX` too, so text from a server never
/// reaches a terminal as a control sequence (the same set ``Terminal/safe(_:limit:)`` escapes).
public struct JSONText {
    public var bytes: [UInt8] = []
    private var needsComma = false

    public init() {}

    /// Starts an object; keys must then come in the order the output should have (sorted).
    public mutating func openObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func closeObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func openArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    public mutating func closeArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes `"key":`; the value follows.
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func string(_ value: String) {
        separate()
        Self.appendQuoted(value, to: &bytes)
        needsComma = true
    }

    public mutating func int(_ value: some BinaryInteger) {
        separate()
        Self.appendDecimal(value, to: &bytes)
        needsComma = true
    }

    /// A number as `JSONEncoder` writes it (`30`, `12.5`); `null` for a value JSON cannot hold.
    public mutating func double(_ value: Double) {
        separate()
        if !value.isFinite {
            bytes.append(contentsOf: "null".utf8)
        } else if value == value.rounded(), abs(value) < 1e15 {
            Self.appendDecimal(Int64(value), to: &bytes)
        } else {
            bytes.append(contentsOf: "\(value)".utf8)
        }
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    public mutating func date(_ value: Date) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        ISO8601Timestamp.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes `"key":value` only when `value` is present, as `JSONEncoder` omits a `nil`.
    public mutating func string(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        self.key(key)
        string(value)
    }

    public mutating func int(_ key: StaticString, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        self.key(key)
        int(value)
    }

    public mutating func double(_ key: StaticString, _ value: Double?) {
        guard let value else { return }
        self.key(key)
        double(value)
    }

    public mutating func date(_ key: StaticString, _ value: Date?) {
        guard let value else { return }
        self.key(key)
        date(value)
    }

    public mutating func strings(_ key: StaticString, _ values: [String]) {
        self.key(key)
        openArray()
        for value in values { string(value) }
        closeArray()
    }

    /// Ends a line of JSON Lines, ready for the next value.
    public mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        needsComma = false
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    /// Appends `value` as a quoted, escaped JSON string.
    public static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            var index = 0
            let count = utf8.count
            while index < count {
                let byte = utf8[index]
                var escape: (length: Int, scalar: UInt32)?
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F {
                    escape = (1, UInt32(byte))
                } else if byte == 0xC2, index + 1 < count, (0x80...0x9F).contains(utf8[index + 1]) {
                    escape = (2, UInt32(utf8[index + 1]))                                     // C1: U+0080…U+009F
                } else if byte == 0xE2, index + 2 < count, utf8[index + 1] == 0x80, (0xAA...0xAE).contains(utf8[index + 2]) {
                    escape = (3, 0x2000 + UInt32(utf8[index + 2]) - 0x80)                     // U+202A…U+202E
                } else if byte == 0xE2, index + 2 < count, utf8[index + 1] == 0x81, (0xA6...0xA9).contains(utf8[index + 2]) {
                    escape = (3, 0x2040 + UInt32(utf8[index + 2]) - 0x80)                     // U+2066…U+2069
                }
                guard let (length, scalar) = escape else {
                    index += 1
                    continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscape(scalar, to: &bytes)
                index += length
                start = index
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ scalar: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch scalar {
        case 0x22: bytes.append(UInt8(ascii: "\""))
        case 0x5C: bytes.append(UInt8(ascii: "\\"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(UInt8(ascii: "u"))
            for shift: UInt32 in [12, 8, 4, 0] {
                let digit = UInt8((scalar >> shift) & 0xF)
                bytes.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
            }
        }
    }

    static func appendDecimal(_ value: some BinaryInteger, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = UInt64(value.magnitude)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var count = 0
            repeat {
                digits[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[(20 - count)...]))
        }
    }
}
