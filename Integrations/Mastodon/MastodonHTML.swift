/// Renders the HTML of a status as plain text for search and the terminal: paragraphs become
/// blank lines, `<br>` a line break, `script` and `style` elements vanish with their contents,
/// other tags vanish, and character references are decoded (`&#0;` as U+FFFD: no NUL is stored).
///
/// It works on the UTF-8 bytes: every status of every page goes through it, and walking
/// `Character`s (grapheme breaking) cost more than decoding the JSON around it. Tags and
/// references are ASCII, so a byte never splits a character that matters.
enum MastodonHTML {
    static func plainText(_ html: String) -> String {
        var html = html
        return html.withUTF8 { plainText(utf8: $0) }
    }

    private static func plainText(utf8 b: UnsafeBufferPointer<UInt8>) -> String {
        let count = b.count
        guard count > 0 else { return "" }
        // A closing </p> becomes a blank line only when another <p follows somewhere after it.
        var lastParagraph = -1
        if count >= 2 {
            for i in stride(from: count - 2, through: 0, by: -1) where b[i] == UInt8(ascii: "<") && b[i + 1] == UInt8(ascii: "p") {
                lastParagraph = i
                break
            }
        }
        // Every tag and reference is at least as long as what it becomes, so the text fits in
        // the HTML's length and is written straight into the string's storage.
        return String(unsafeUninitializedCapacity: count) { out in
            var length = 0
            var i = 0
            while i < count {
                let byte = b[i]
                if byte == UInt8(ascii: "<"), let close = index(of: UInt8(ascii: ">"), in: b, from: i + 1) {
                    let tag = close - i - 1
                    if let name = rawTextElement(in: b, at: i) {
                        // Raw text up to its end tag is code, never text (HTML's script and style).
                        i = endOfRawText(name, in: b, from: close + 1)
                        continue
                    }
                    if tag >= 2, b[i + 1] | 0x20 == UInt8(ascii: "b"), b[i + 2] | 0x20 == UInt8(ascii: "r") {
                        out[length] = UInt8(ascii: "\n")
                        length += 1
                    } else if tag == 2, b[i + 1] == UInt8(ascii: "/"), b[i + 2] | 0x20 == UInt8(ascii: "p"), lastParagraph > close {
                        out[length] = UInt8(ascii: "\n")
                        out[length + 1] = UInt8(ascii: "\n")
                        length += 2
                    }
                    i = close + 1
                } else if byte == UInt8(ascii: "&"), let (scalar, end) = reference(in: b, at: i) {
                    for unit in UTF8.encode(scalar)! {
                        out[length] = unit
                        length += 1
                    }
                    i = end
                } else {
                    out[length] = byte
                    length += 1
                    i += 1
                }
            }
            return trim(out, length)
        }
    }

    /// Moves the text without the white space and line breaks at either end (the scalars of
    /// `CharacterSet.whitespacesAndNewlines`) to the start of `text`; returns its new length.
    private static func trim(_ text: UnsafeMutableBufferPointer<UInt8>, _ length: Int) -> Int {
        var start = 0
        while start < length, let (scalar, size) = scalar(in: text, at: start, before: length), isSpace(scalar) { start += size }
        var end = length
        while end > start {
            var first = end - 1
            while first > start, text[first] & 0xC0 == 0x80 { first -= 1 }
            guard let (scalar, _) = scalar(in: text, at: first, before: end), isSpace(scalar) else { break }
            end = first
        }
        if start > 0, end > start {
            UnsafeMutableRawPointer(text.baseAddress!).copyMemory(from: text.baseAddress! + start, byteCount: end - start)
        }
        return end - start
    }

    /// The scalar whose UTF-8 starts at `i`, and its length; `nil` for bytes that are not UTF-8.
    private static func scalar(in text: UnsafeMutableBufferPointer<UInt8>, at i: Int, before end: Int) -> (Unicode.Scalar, Int)? {
        var iterator = UnsafeBufferPointer(rebasing: text[i..<min(end, i + 4)]).makeIterator()
        var decoder = UTF8()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator) else { return nil }
        return (scalar, UTF8.width(scalar))
    }

    /// `"script"` or `"style"` when a start tag of that element begins at `start`.
    private static func rawTextElement(in b: UnsafeBufferPointer<UInt8>, at start: Int) -> StaticString? {
        for name: StaticString in ["script", "style"] where matches(name, in: b, at: start + 1) {
            let after = start + 1 + name.utf8CodeUnitCount
            guard after < b.count else { return nil }
            switch b[after] {
            case UInt8(ascii: ">"), UInt8(ascii: "/"), 0x20, 0x09, 0x0A, 0x0C, 0x0D: return name
            default: return nil
            }
        }
        return nil
    }

    /// The index after the `>` of the first `</name` from `start`; the end of the text when none comes.
    private static func endOfRawText(_ name: StaticString, in b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var i = start
        while let open = index(of: UInt8(ascii: "<"), in: b, from: i) {
            if open + 1 < b.count, b[open + 1] == UInt8(ascii: "/"), matches(name, in: b, at: open + 2) {
                return index(of: UInt8(ascii: ">"), in: b, from: open + 2).map { $0 + 1 } ?? b.count
            }
            i = open + 1
        }
        return b.count
    }

    /// Whether the ASCII letters of `name` come at `start`, in any case.
    private static func matches(_ name: StaticString, in b: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        let count = name.utf8CodeUnitCount
        guard start + count <= b.count else { return false }
        for k in 0..<count where b[start + k] | 0x20 != name.utf8Start[k] { return false }
        return true
    }

    private static func index(of byte: UInt8, in b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        while i < b.count {
            if b[i] == byte { return i }
            i += 1
        }
        return nil
    }

    /// The character a reference at `start` (`&amp;`, `&#39;`, `&#x1F600;`) stands for and the
    /// index after its `;`, which must come within 11 bytes; `nil` for anything else.
    private static func reference(in b: UnsafeBufferPointer<UInt8>, at start: Int) -> (Unicode.Scalar, Int)? {
        var semicolon = start + 1
        while semicolon < min(b.count, start + 12), b[semicolon] != UInt8(ascii: ";") {
            guard b[semicolon] < 0x80 else { return nil }
            semicolon += 1
        }
        guard semicolon < min(b.count, start + 12) else { return nil }
        let name = UnsafeBufferPointer(rebasing: b[(start + 1)..<semicolon])
        return entity(name).map { ($0, semicolon + 1) }
    }

    private static func entity(_ name: UnsafeBufferPointer<UInt8>) -> Unicode.Scalar? {
        func named(_ word: StaticString) -> Bool {
            name.count == word.utf8CodeUnitCount && name.elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
        }
        if named("amp") { return "&" }
        if named("lt") { return "<" }
        if named("gt") { return ">" }
        if named("quot") { return "\"" }
        if named("apos") { return "'" }
        if named("nbsp") { return "\u{00A0}" }
        guard name.first == UInt8(ascii: "#") else { return nil }
        let digits = String(decoding: UnsafeBufferPointer(rebasing: name.dropFirst()), as: UTF8.self)
        guard let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits) else { return nil }
        // As HTML reads them: NUL, a surrogate or a number past U+10FFFF is U+FFFD.
        return value == 0 ? "\u{FFFD}" : Unicode.Scalar(value) ?? "\u{FFFD}"
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200B, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }
}
