/// A text's UTF-8 bytes with ASCII letters lower-cased and the Kelvin sign (U+212A, the one
/// non-ASCII character whose lower case is ASCII: `k`) written `k`, read byte by byte to find
/// which rules can match without splitting the text into characters (``RuleIndex``).
///
/// What it promises, for a word `w` of ASCII letters, digits and `_` (lower case):
/// - if `w` is one of ``TextMatcher/tokens(_:)`` of the text, `w` is one of ``asciiPieces(_:)``:
///   a token is a whole run of word characters of the lower-cased text, and an ASCII byte always
///   starts a character of its own, but after a Unicode "prepend" character (U+0600…), which
///   can take the next character in: so after a non-ASCII byte, a piece is also given without
///   its first byte;
/// - if `w` is one of the text's hashtags (``PostRules/Compiled/hashtags(in:)``), `w` is one of
///   ``hashtagPieces(_:)``: the run of word bytes after a `#`.
struct FoldedText {
    let bytes: [UInt8]
    /// Whether the text holds any non-ASCII byte (a Kelvin sign counts).
    let hasNonASCII: Bool

    init(_ text: String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var nonASCII = false
        for byte in text.utf8 {
            if byte &- UInt8(ascii: "A") < 26 {
                bytes.append(byte | 0x20)
                continue
            }
            bytes.append(byte)
            guard byte >= 0x80 else { continue }
            nonASCII = true
            // E2 84 AA is the Kelvin sign.
            if byte == 0xAA, bytes.count >= 3, bytes[bytes.count - 3] == 0xE2, bytes[bytes.count - 2] == 0x84 {
                bytes.removeLast(3)
                bytes.append(UInt8(ascii: "k"))
            }
        }
        self.bytes = bytes
        hasNonASCII = nonASCII
    }

    static func isWordByte(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "0") < 10 || byte == UInt8(ascii: "_")
    }

    /// Calls `body` with each maximal run of ASCII word bytes, and, for a run after a non-ASCII
    /// byte, with the run without its first byte too.
    func asciiPieces(_ body: (String) -> Void) {
        var start = -1
        for index in 0...bytes.count {
            let word = index < bytes.count && Self.isWordByte(bytes[index])
            if word, start < 0 { start = index }
            if !word, start >= 0 {
                body(String(decoding: bytes[start..<index], as: UTF8.self))
                if start > 0, bytes[start - 1] >= 0x80, index - start > 1 {
                    body(String(decoding: bytes[(start + 1)..<index], as: UTF8.self))
                }
                start = -1
            }
        }
    }

    /// Calls `body` with the run of ASCII word bytes after each `#` (when not empty).
    func hashtagPieces(_ body: (String) -> Void) {
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "#") else {
                index += 1
                continue
            }
            let start = index + 1
            var end = start
            while end < bytes.count, Self.isWordByte(bytes[end]) { end += 1 }
            if end > start { body(String(decoding: bytes[start..<end], as: UTF8.self)) }
            index = max(end, start)
        }
    }
}
