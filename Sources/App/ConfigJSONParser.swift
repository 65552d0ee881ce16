import Core
import Foundation

/// A recursive-descent reader over the bytes. Positions stay byte offsets until an error is built;
/// only then are lines and columns counted, so a valid file pays nothing for them.
struct ConfigJSONParser {
    typealias SyntaxError = ConfigJSON.SyntaxError
    let bytes: [UInt8]
    /// Past the byte order mark, which editors do not show as a column.
    let start: Int
    var index: Int
    /// Offsets of the `{` and `[` now open, innermost last, to name the one an early end leaves open.
    var open: [Int] = []

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        index = start
    }

    mutating func document() throws(SyntaxError) -> ConfigValue {
        skipWhitespace()
        let value = try value(expected: "a value")
        skipWhitespace()
        guard index == bytes.count else { throw unexpected("the end of the file after the top-level value") }
        return value
    }

    /// - Parameter expected: what the message names when no value starts here.
    mutating func value(expected: String) throws(SyntaxError) -> ConfigValue {
        if at("{") { return try object() }
        if at("[") { return try array() }
        if at("\"") { return .string(try string()) }
        if at("-") || index < bytes.count && isDigit(bytes[index]) { return .number(try number()) }
        // The whole word must match, so `nulls` and `True` are named in full rather than half-read.
        let word = bytes[index..<index + wordLength(at: index)]
        for (name, literal) in [("true", ConfigValue.bool(true)), ("false", .bool(false)), ("null", .null)]
        where word.elementsEqual(name.utf8) {
            index += word.count
            return literal
        }
        throw unexpected(expected)
    }

    mutating func object() throws(SyntaxError) -> ConfigValue {
        try enter()
        defer { open.removeLast() }  // after any error is built, so an early end still names this object
        var members: [String: ConfigValue] = [:]
        var keyOffsets: [String: Int] = [:]
        if consume("}") { return .object(members) }
        while true {
            let keyOffset = index
            guard at("\"") else { throw unexpected(members.isEmpty ? #"a string key or "}""# : "a string key") }
            let key = try string()
            if let first = keyOffsets[key] {
                throw error(at: keyOffset, "duplicate key \(quoted(key)) (first at \(place(first)))")
            }
            keyOffsets[key] = keyOffset
            guard consume(":") else { throw unexpected(#"":" after an object key"#) }
            skipWhitespace()
            members[key] = try value(expected: "a value")
            if consume("}") { return .object(members) }
            try comma(before: "}", expected: #""," or "}" after an object member"#)
        }
    }

    mutating func array() throws(SyntaxError) -> ConfigValue {
        try enter()
        defer { open.removeLast() }
        var elements: [ConfigValue] = []
        if consume("]") { return .array(elements) }
        while true {
            elements.append(try value(expected: elements.isEmpty ? #"a value or "]""# : "a value"))
            if consume("]") { return .array(elements) }
            try comma(before: "]", expected: #""," or "]" after an array element"#)
        }
    }

    /// Opens an array or object, refusing a depth that only a mistake or an attack would write.
    mutating func enter() throws(SyntaxError) {
        guard open.count < ConfigJSON.maximumDepth else {
            throw error(at: index, "nesting deeper than \(ConfigJSON.maximumDepth) levels")
        }
        open.append(index)
        index += 1
        skipWhitespace()
    }

    /// The comma between members, which must not be the last thing before the closing bracket.
    mutating func comma(before close: Unicode.Scalar, expected: String) throws(SyntaxError) {
        let comma = index
        guard consume(",") else { throw unexpected(expected) }
        skipWhitespace()
        if at(close) { throw error(at: comma, "trailing comma before \"\(close)\"") }
    }

    mutating func number() throws(SyntaxError) -> Double {
        let begin = index
        _ = skip("-")
        if skip("0") {
            if index < bytes.count, isDigit(bytes[index]) { throw error(at: begin, "number \(numberText(at: begin)) has a leading zero") }
        } else if !skipDigits() {
            throw unexpected(#"a digit after "-""#)
        }
        if skip("."), !skipDigits() { throw unexpected("a digit after the decimal point") }
        if skip("e") || skip("E") {
            _ = skip("+") || skip("-")
            if !skipDigits() { throw unexpected("a digit in the exponent") }
        }
        // Overflow reads as infinity, which no config value means; underflow to 0 is harmless.
        guard let value = Double(String(decoding: bytes[begin..<index], as: UTF8.self)), value.isFinite else {
            throw error(at: begin, "number \(numberText(at: begin)) is too large")
        }
        return value
    }

    mutating func string() throws(SyntaxError) -> String {
        let quote = index
        index += 1
        // A run without escapes is copied whole; `decoded` is filled only once an escape appears.
        var decoded: [UInt8] = []
        var escaped = false
        var runStart = index
        while true {
            guard index < bytes.count else { throw endOfFile(opened: quote, "string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let run = bytes[runStart..<index]
                index += 1
                guard escaped else { return String(decoding: run, as: UTF8.self) }
                return String(decoding: decoded + run, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                decoded += bytes[runStart..<index]
                escaped = true
                try escape(into: &decoded, quote: quote)
                runStart = index
            } else if byte < 0x20 {
                throw error(at: index, controlCharacterMessage(byte))
            } else if byte < 0x80 {
                index += 1
            } else {
                guard let scalar = scalar(at: index) else { throw invalidUTF8(at: index) }
                index += UTF8.width(scalar)
            }
        }
    }

    /// `\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t`, by the letter after the backslash.
    static let simpleEscapes: [UInt8: UInt8] = [0x22: 0x22, 0x5C: 0x5C, 0x2F: 0x2F, 0x62: 0x08, 0x66: 0x0C, 0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09]

    mutating func escape(into decoded: inout [UInt8], quote: Int) throws(SyntaxError) {
        let backslash = index
        guard index + 1 < bytes.count else { throw endOfFile(opened: quote, "string") }
        let letter = bytes[index + 1]
        index += 2
        if let byte = Self.simpleEscapes[letter] {
            decoded.append(byte)
            return
        }
        guard letter == UInt8(ascii: "u") else {
            throw failure(describing: backslash + 1, at: backslash) { #"invalid escape: backslash followed by \#($0); write \\ for a backslash"# }
        }
        var value = try hexQuad(backslash: backslash, quote: quote)
        if (0xDC00...0xDFFF).contains(value) { throw unpairedSurrogate(value, at: backslash) }
        if (0xD800...0xDBFF).contains(value) {
            // UTF-16 spells a character past U+FFFF as two escapes; half of the pair is no character.
            let second = index
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw unpairedSurrogate(value, at: backslash)
            }
            index += 2
            let low = try hexQuad(backslash: second, quote: quote)
            guard (0xDC00...0xDFFF).contains(low) else { throw unpairedSurrogate(value, at: backslash) }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        }
        UTF8.encode(Unicode.Scalar(value)!) { decoded.append($0) }  // no surrogate is left, so a scalar
    }

    /// The four hex digits of a `\u` escape, with `index` just past the `u`.
    mutating func hexQuad(backslash: Int, quote: Int) throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw endOfFile(opened: quote, "string") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            guard let digit = Character(Unicode.Scalar(byte)).hexDigitValue else {
                throw error(at: backslash, #"\u must be followed by 4 hex digits"#)
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    // MARK: - Bytes

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    func at(_ character: Unicode.Scalar) -> Bool { index < bytes.count && bytes[index] == UInt8(ascii: character) }

    /// Takes `character` if it is next.
    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard at(character) else { return false }
        index += 1
        return true
    }

    /// Takes `character` if it is the next token, past any whitespace.
    mutating func consume(_ character: Unicode.Scalar) -> Bool {
        skipWhitespace()
        return skip(character)
    }

    /// Skips one or more digits; false when there is none.
    mutating func skipDigits() -> Bool {
        let begin = index
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        return index > begin
    }

    func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// How many ASCII letters, digits and `_` start at `offset`: a word a message can quote whole.
    func wordLength(at offset: Int) -> Int {
        bytes[offset...].prefix { isDigit($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x5F }.count
    }

    /// The scalar whose UTF-8 starts at `offset`, or nil when that is not well-formed UTF-8.
    func scalar(at offset: Int) -> Unicode.Scalar? {
        // The standard library's decoder is strict: no overlongs, surrogates or values past U+10FFFF.
        var iterator = bytes[offset...].makeIterator()
        var decoder = UTF8()
        guard case .scalarValue(let scalar) = decoder.decode(&iterator) else { return nil }
        return scalar
    }

    // MARK: - Errors

    func error(at offset: Int, _ message: String) -> SyntaxError {
        let (line, column) = lineAndColumn(of: offset)
        return SyntaxError(line: line, column: column, message: message)
    }

    /// Safe to count bytes this way because everything before an error's offset is valid UTF-8.
    func lineAndColumn(of offset: Int) -> (Int, Int) {
        var (line, column) = (1, 1)
        for position in start..<offset {
            switch bytes[position] {
            case 0x0D where position + 1 < bytes.count && bytes[position + 1] == 0x0A, 0x80...0xBF: break
            case 0x0A, 0x0D: (line, column) = (line + 1, 1)
            default: column += 1
            }
        }
        return (line, column)
    }

    func place(_ offset: Int) -> String {
        let (line, column) = lineAndColumn(of: offset)
        return "line \(line), column \(column)"
    }

    /// `expected <what>, found <what is at index>`, or the more useful message for an early end,
    /// a comment, a single quote or a byte that is not UTF-8.
    func unexpected(_ expected: String) -> SyntaxError {
        if at("/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") || bytes[index + 1] == UInt8(ascii: "*") {
            return error(at: index, "comments are not allowed in JSON")
        }
        let hint = at("'") ? "; JSON strings take double quotes" : ""
        return failure(describing: index, at: index) { "expected \(expected), found \($0)\(hint)" }
    }

    /// An error at `offset` whose message shows what is at `described`, never as raw bytes.
    func failure(describing described: Int, at offset: Int, _ message: (String) -> String) -> SyntaxError {
        guard described < bytes.count else {
            guard let container = open.last else { return endOfFile(opened: nil, "") }
            return endOfFile(opened: container, bytes[container] == UInt8(ascii: "{") ? "object" : "array")
        }
        if bytes[described] == UInt8(ascii: "\"") { return error(at: offset, message("a string")) }
        let word = wordLength(at: described)
        if word > 0 {
            let text = String(decoding: bytes[described..<described + min(word, 24)], as: UTF8.self)
            return error(at: offset, message("\"\(text)\(word > 24 ? "…" : "")\""))
        }
        guard let scalar = scalar(at: described) else { return invalidUTF8(at: described) }
        return error(at: offset, message(isPrintable(scalar) ? "\"\(scalar)\"" : codePoint(scalar.value)))
    }

    func endOfFile(opened: Int?, _ what: String) -> SyntaxError {
        guard let opened else { return error(at: bytes.count, "unexpected end of file; expected a value") }
        return error(at: bytes.count, "unexpected end of file; the \(what) opened at \(place(opened)) is not closed")
    }

    func invalidUTF8(at offset: Int) -> SyntaxError {
        error(at: offset, String(format: "invalid UTF-8 starting with byte 0x%02X; save the file as UTF-8", bytes[offset]))
    }

    func unpairedSurrogate(_ value: UInt32, at offset: Int) -> SyntaxError {
        error(at: offset, String(format: #"unpaired surrogate \u%04X in a string (\uD800-\uDBFF must be followed by \uDC00-\uDFFF)"#, value))
    }

    func controlCharacterMessage(_ byte: UInt8) -> String {
        let short: [UInt8: String] = [0x08: #"\b"#, 0x09: #"\t"#, 0x0A: #"\n"#, 0x0C: #"\f"#, 0x0D: #"\r"#]
        let escape = short[byte] ?? String(format: #"\u%04X"#, byte)
        // A raw line break in a string is most often a missing closing quote, so offer that first.
        let isLineBreak = byte == 0x0A || byte == 0x0D
        return "control character \(codePoint(UInt32(byte)))\(isLineBreak ? " (line break)" : "") in a string; "
            + (isLineBreak ? "close the string or write \(escape)" : "write \(escape)")
    }

    /// A key as a JSON string literal, escaped so a terminal receives nothing raw.
    func quoted(_ key: String) -> String {
        var text = "\""
        for scalar in key.unicodeScalars {
            let category = scalar.properties.generalCategory
            if scalar == "\"" || scalar == "\\" {
                text += "\\\(scalar)"
            } else if isPrintable(scalar) || scalar == " " || [.nonspacingMark, .spacingMark, .enclosingMark].contains(category) {
                text.unicodeScalars.append(scalar)
            } else {
                text += String(scalar).utf16.map { String(format: #"\u%04X"#, $0) }.joined()
            }
        }
        return text + "\""
    }

    /// Letters, numbers, punctuation and symbols: what shows as itself between quotes.
    func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .connectorPunctuation, .dashPunctuation,
             .openPunctuation, .closePunctuation, .initialPunctuation, .finalPunctuation, .otherPunctuation,
             .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol: true
        default: false
        }
    }

    func codePoint(_ value: UInt32) -> String { String(format: "U+%04X", value) }

    /// The number-like run at `offset` for a message, cut short so a runaway one stays readable.
    func numberText(at offset: Int) -> String {
        let run = bytes[offset...].prefix { (0x30...0x39).contains($0) || "+-.eE".utf8.contains($0) }
        return String(decoding: run.prefix(32), as: UTF8.self) + (run.count > 32 ? "…" : "")
    }
}
