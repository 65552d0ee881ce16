extension JSONWriter {
    /// Appends `value` as a quoted, escaped JSON string: runs with nothing to escape are copied
    /// whole, which is most of every text.
    mutating func appendQuoted(_ value: String) {
        var value = value
        value.withUTF8 { appendQuoted(utf8: $0) }
    }

    /// Appends `utf8` (well-formed UTF-8) quoted and escaped.
    mutating func appendQuoted(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        let escaping = escaping
        do {
            var start = 0
            var index = 0
            let count = utf8.count
            while index < count {
                let byte = utf8[index]
                var escape: (length: Int, scalar: UInt32)?
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    escape = (1, UInt32(byte))
                } else if byte >= 0x7F, escaping.contains(.terminalControls) {
                    if byte == 0x7F {
                        escape = (1, 0x7F)
                    } else if byte == 0xC2, index + 1 < count, (0x80...0x9F).contains(utf8[index + 1]) {
                        escape = (2, UInt32(utf8[index + 1]))                                 // C1: U+0080…U+009F
                    } else if byte == 0xE2, index + 2 < count, utf8[index + 1] == 0x80, (0xAA...0xAE).contains(utf8[index + 2]) {
                        escape = (3, 0x2000 + UInt32(utf8[index + 2]) - 0x80)                 // U+202A…U+202E
                    } else if byte == 0xE2, index + 2 < count, utf8[index + 1] == 0x81, (0xA6...0xA9).contains(utf8[index + 2]) {
                        escape = (3, 0x2040 + UInt32(utf8[index + 2]) - 0x80)                 // U+2066…U+2069
                    }
                }
                guard let (length, scalar) = escape else {
                    index += 1
                    continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscape(scalar)
                index += length
                start = index
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether `bytes` are well-formed UTF-8 (The Unicode Standard, table 3-7): no overlong
    /// form, no surrogate, nothing past U+10FFFF, no sequence cut short.
    public static func isWellFormed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int, low: UInt8, high: UInt8
            switch lead {
            case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
            case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, low, high) = (3, 0x80, 0xBF)
            case 0xED: (length, low, high) = (3, 0x80, 0x9F)
            case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
            case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
            case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
            default: return false
            }
            guard index + length <= count, (low...high).contains(bytes[index + 1]) else { return false }
            for next in index + 2 ..< index + length where bytes[next] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }

    private mutating func appendEscape(_ scalar: UInt32) {
        bytes.append(UInt8(ascii: "\\"))
        let named = !escaping.contains(.controlsAsUnicode)
        switch scalar {
        case 0x22: bytes.append(UInt8(ascii: "\""))
        case 0x5C: bytes.append(UInt8(ascii: "\\"))
        case 0x00 where escaping.contains(.replacingNUL): bytes.append(contentsOf: "ufffd".utf8)
        case 0x0A where named: bytes.append(UInt8(ascii: "n"))
        case 0x0D where named: bytes.append(UInt8(ascii: "r"))
        case 0x09 where named: bytes.append(UInt8(ascii: "t"))
        case 0x08 where named: bytes.append(UInt8(ascii: "b"))
        case 0x0C where named: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(UInt8(ascii: "u"))
            for shift: UInt32 in [12, 8, 4, 0] {
                let digit = UInt8((scalar >> shift) & 0xF)
                bytes.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
            }
        }
    }

    /// Appends `value` in decimal, with a `-` when negative.
    static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
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
