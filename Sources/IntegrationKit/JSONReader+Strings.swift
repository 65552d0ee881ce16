import Foundation

/// Strings and keys: checked, skipped, or decoded with their escapes.
extension JSONReader {
    /// A string; the common case (no escapes) is one scan and one copy.
    mutating func readStringSyntax() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = offset
        skipPlainWords()
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
                offset += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { return try readEscapedString(from: start) }
            guard byte >= 0x20 else { throw SyntaxError(offset: offset, reason: "a control character in a string") }
            offset += 1
        }
        throw SyntaxError(offset: start, reason: "a string does not end")
    }

    /// Moves past the string's bytes eight at a time while none of them ends the string, starts an
    /// escape or is a control character; the byte loops after it find which one does.
    ///
    /// Each test flags a byte that may match (a match always is flagged; a byte above one that
    /// matches may be too), so a flagged word is only left to the byte loop. Strings are most of
    /// a timeline's bytes, and the byte loop was 2–5% of a pull's CPU (issue 40).
    @inline(__always)
    mutating func skipPlainWords() {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        guard let base = bytes.baseAddress else { return }
        while offset + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
            let flagged = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
            guard flagged & highs == 0 else { return }
            offset += 8
        }
    }

    /// The index of a key in `table`; a key with escapes is decoded first.
    mutating func readKey(_ table: JSONKeyTable) throws -> Int? {
        try expect(UInt8(ascii: "\""))
        let start = offset
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                offset += 1
                return table.match(UnsafeBufferPointer(rebasing: bytes[start..<(offset - 1)]))
            }
            if byte == UInt8(ascii: "\\") {
                offset = start - 1
                return table.match(try readStringSyntax())
            }
            guard byte >= 0x20 else { throw SyntaxError(offset: offset, reason: "a control character in a string") }
            offset += 1
        }
        throw SyntaxError(offset: start, reason: "a string does not end")
    }

    /// Checks a string's syntax as `readStringSyntax` does, without building it: most of a body
    /// is fields nobody reads.
    mutating func skipStringSyntax() throws {
        try expect(UInt8(ascii: "\""))
        let start = offset
        while offset < bytes.count {
            skipPlainWords()
            guard offset < bytes.count else { break }
            let byte = bytes[offset]
            offset += 1
            if byte == UInt8(ascii: "\"") { return }
            if byte == UInt8(ascii: "\\") {
                guard offset < bytes.count else { break }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"): _ = try readHex4()
                default: throw SyntaxError(offset: offset - 1, reason: "an unknown escape in a string")
                }
            } else if byte < 0x20 {
                throw SyntaxError(offset: offset - 1, reason: "a control character in a string")
            }
        }
        throw SyntaxError(offset: start, reason: "a string does not end")
    }

    /// The slow path, for a string with escapes (servers that escape all non-ASCII, or `<`
    /// and `>` as Rails does, send many). The string is checked to its end first, so decoding
    /// cannot fail and writes straight into the string's storage: no escape is shorter than
    /// what it stands for.
    mutating func readEscapedString(from start: Int) throws -> String {
        offset = start - 1
        try skipStringSyntax()
        let end = offset - 1
        return String(unsafeUninitializedCapacity: end - start) { out in
            var length = 0
            var i = start
            func put(_ byte: UInt8) {
                out[length] = byte
                length += 1
            }
            while i < end {
                let byte = bytes[i]
                guard byte == UInt8(ascii: "\\") else {
                    put(byte)
                    i += 1
                    continue
                }
                let escape = bytes[i + 1]
                i += 2
                switch escape {
                case UInt8(ascii: "b"): put(0x08)
                case UInt8(ascii: "f"): put(0x0C)
                case UInt8(ascii: "n"): put(0x0A)
                case UInt8(ascii: "r"): put(0x0D)
                case UInt8(ascii: "t"): put(0x09)
                case UInt8(ascii: "u"):
                    let unit = hex4(at: i)
                    i += 4
                    // A lone surrogate is not a scalar, and NUL is text nobody stores: each reads as
                    // one U+FFFD. A high surrogate takes the escape after it only when that is its
                    // low half; anything else there is read on its own (RFC 8259 §7, Unicode §3.9).
                    var scalar: Unicode.Scalar = "\u{FFFD}"
                    if (0xD800...0xDBFF).contains(unit) {
                        if i + 1 < end, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u"),
                           case let low = hex4(at: i + 2), (0xDC00...0xDFFF).contains(low) {
                            scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
                            i += 6
                        }
                    } else if unit != 0, let plain = Unicode.Scalar(unit) {
                        scalar = plain
                    }
                    for byte in UTF8.encode(scalar)! { put(byte) }
                default: put(escape)        // ", \ and /, the only others skipStringSyntax lets through
                }
            }
            return length
        }
    }

    /// Four hexadecimal digits that `skipStringSyntax` has checked.
    func hex4(at i: Int) -> UInt32 {
        var value: UInt32 = 0
        for byte in bytes[i..<(i + 4)] {
            value = value << 4 | UInt32(byte <= 0x39 ? byte - 0x30 : (byte | 0x20) - 0x61 + 10)
        }
        return value
    }

    mutating func readHex4() throws -> UInt32 {
        guard offset + 4 <= bytes.count else { throw SyntaxError(offset: offset, reason: "a \\u escape is cut short") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw SyntaxError(offset: offset, reason: "a \\u escape is not hexadecimal")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }
}
