extension JSONWriter {
    /// Appends `value` as a quoted, escaped JSON string: runs with nothing to escape are copied
    /// whole, which is most of every text.
    mutating func appendQuoted(_ value: String) {
        Self.appendString(value, escaping: escaping, to: &bytes)
    }

    /// Appends `value` to `bytes` as ``string(_:)`` writes it with `escaping`: a JSON line
    /// written straight into a buffer (`export`'s rows) escapes its strings through here.
    public static func appendString(_ value: String, escaping: Escaping, to bytes: inout [UInt8]) {
        var value = value
        // A native string's bytes are well-formed: `false` (ill-formed) cannot come back.
        _ = value.withUTF8 { appendQuoted(utf8: $0, escaping: escaping, to: &bytes) }
    }

    /// Appends text given as its UTF-8 bytes as ``string(utf8:)`` writes it with `escaping`:
    /// exactly what ``appendString(_:escaping:to:)`` appends for
    /// `String(decoding: utf8, as: UTF8.self)`.
    public static func appendString(utf8: UnsafeBufferPointer<UInt8>, escaping: Escaping, to bytes: inout [UInt8]) {
        if !appendQuoted(utf8: utf8, escaping: escaping, to: &bytes) {
            appendString(String(decoding: utf8, as: UTF8.self), escaping: escaping, to: &bytes)
        }
    }

    /// Appends `utf8` quoted and escaped, checking in the same pass that it is well-formed
    /// UTF-8; when it is not, appends nothing and returns `false` (the caller repairs it as
    /// `String` does, then writes that). Eight ASCII bytes with nothing to escape are passed
    /// over at a time: most of every text.
    static func appendQuoted(utf8: UnsafeBufferPointer<UInt8>, escaping: Escaping, to bytes: inout [UInt8]) -> Bool {
        let mark = bytes.count
        bytes.append(UInt8(ascii: "\""))
        let terminal = escaping.contains(.terminalControls)
        var start = 0
        var index = 0
        let count = utf8.count
        while index < count {
            if let base = utf8.baseAddress, index + 8 <= count,
               isPlainASCII(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self), terminal: terminal) {
                index += 8
                continue
            }
            let byte = utf8[index]
            let length: Int, scalar: UInt32
            if byte < 0x80 {
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (byte == 0x7F && terminal) else {
                    index += 1
                    continue
                }
                (length, scalar) = (1, UInt32(byte))
            } else {
                let size = sequenceLength(utf8, at: index)
                guard size > 0 else {
                    bytes.removeSubrange(mark...)
                    return false
                }
                guard terminal, let control = terminalControl(utf8, at: index, length: size) else {
                    index += size
                    continue
                }
                (length, scalar) = (size, control)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
            appendEscape(scalar, escaping: escaping, to: &bytes)
            index += length
            start = index
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<count]))
        bytes.append(UInt8(ascii: "\""))
        return true
    }

    /// Whether none of the eight bytes in `word` needs a look: each is ASCII, not a C0
    /// control, `"` or `\`, nor DEL when `terminal`. (A word that does is looked at byte by byte.)
    @inline(__always)
    private static func isPlainASCII(_ word: UInt64, terminal: Bool) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        // Any byte zero after the XOR, or (for bytes below 0x80) below 0x20: the classic
        // "has a zero byte" and "has a byte less than n" tests, which miss none.
        func hasZero(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        if word & highs != 0 || (word &- ones &* 0x20) & ~word & highs != 0 { return false }
        if hasZero(word ^ (ones &* 0x22)) || hasZero(word ^ (ones &* 0x5C)) { return false }
        return !(terminal && hasZero(word ^ (ones &* 0x7F)))
    }

    /// The scalar of the character ``Escaping/terminalControls`` escapes that starts at
    /// `index` (a well-formed sequence of `length` bytes): a C1 control, or a bidirectional
    /// override or isolate; `nil` for any other.
    @inline(__always)
    private static func terminalControl(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int, length: Int) -> UInt32? {
        let byte = utf8[index]
        if byte == 0xC2, utf8[index + 1] <= 0x9F { return UInt32(utf8[index + 1]) }             // C1: U+0080…U+009F
        guard byte == 0xE2 else { return nil }
        switch (utf8[index + 1], utf8[index + 2]) {
        case (0x80, 0xAA...0xAE): return 0x2000 + UInt32(utf8[index + 2]) - 0x80                  // U+202A…U+202E
        case (0x81, 0xA6...0xA9): return 0x2040 + UInt32(utf8[index + 2]) - 0x80                  // U+2066…U+2069
        default: return nil
        }
    }

    /// Whether `bytes` are well-formed UTF-8 (The Unicode Standard, table 3-7): no overlong
    /// form, no surrogate, nothing past U+10FFFF, no sequence cut short.
    public static func isWellFormed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            if bytes[index] < 0x80 {
                index += 1
                continue
            }
            let length = sequenceLength(bytes, at: index)
            guard length > 0 else { return false }
            index += length
        }
        return true
    }

    /// How many bytes the well-formed sequence whose lead byte (not ASCII) is at `index` takes
    /// (table 3-7), or 0 when it is ill-formed there.
    @inline(__always)
    private static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        let length: Int, low: UInt8, high: UInt8
        switch bytes[index] {
        case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
        case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, low, high) = (3, 0x80, 0xBF)
        case 0xED: (length, low, high) = (3, 0x80, 0x9F)
        case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
        case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
        case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
        default: return 0
        }
        guard index + length <= bytes.count, (low...high).contains(bytes[index + 1]) else { return 0 }
        for next in index + 2 ..< index + length where bytes[next] & 0xC0 != 0x80 { return 0 }
        return length
    }

    private static func appendEscape(_ scalar: UInt32, escaping: Escaping, to bytes: inout [UInt8]) {
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

    /// Appends `value` in decimal, with a `-` when negative, as ``int(_:)-(Int64)`` writes it.
    public static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
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
