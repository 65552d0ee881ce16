import Foundation

/// A forward-only JSON reader over a response body's bytes.
///
/// The feed decoder reads each field straight into its DTO. This skips the generic `Codable`
/// containers and key dictionaries that dominated a sync's CPU time (half of it, under
/// `perf`).
/// - A syntax error (`JSONReader.SyntaxError`) makes the whole body unreadable.
/// - A value of the wrong type (`JSONReader.FieldError`) concerns one field only. The caller
///   can drop the item it belongs to and go on after it.
public struct JSONReader {
    public struct SyntaxError: Error {
        public var offset: Int
        public var reason: String

        public init(offset: Int, reason: String) {
            self.offset = offset
            self.reason = reason
        }
    }

    /// A field that is missing, null or of the wrong type, named by its path in the item.
    public struct FieldError: Error {
        public var reason: String

        public init(reason: String) { self.reason = reason }
    }

    /// Valid JSON that nests deeper than ``maxDepth``: feedsync does not read it, and since the
    /// same body will nest as deeply when asked again, a caller reports it as a broken contract
    /// rather than a transient fault worth a retry.
    public struct TooDeepError: Error {
        public var offset: Int

        public init(offset: Int) { self.offset = offset }

        /// What is wrong, as a phrase.
        public var reason: String { "the body nests values more than \(JSONReader.maxDepth) deep (at byte \(offset)), deeper than feedsync reads" }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    public private(set) var offset = 0
    /// How deep the values a reader skips may nest.
    public static let maxDepth = 512

    public init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    public var isAtEnd: Bool {
        mutating get {
            skipWhitespace()
            return offset >= bytes.count
        }
    }

    // MARK: Structure

    /// Reads an object, calling `field` with each key; `field` must consume the value.
    public mutating func readObject(_ field: (inout JSONReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if try consumeIf(UInt8(ascii: "}")) { return }
        repeat {
            let key = try readStringSyntax()
            try expect(UInt8(ascii: ":"))
            try field(&self, key)
        } while try consumeIf(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    /// Reads an object, calling `field` with each key as one of `keys`, or `nil` for a key that
    /// is none of them; `field` must consume the value.
    ///
    /// Keys are matched on the body's bytes, so the many keys a reader skips cost no string.
    ///
    ///     enum Field: String, CaseIterable { case id, text }
    ///     static let fields = JSONKeys<Field>()
    ///
    ///     try reader.readObject(Self.fields) { reader, field in
    ///         switch field {
    ///         case .id?: id = try reader.string("id")
    ///         case .text?: text = try reader.string("text")
    ///         case nil: try reader.skipValue()
    ///         }
    ///     }
    @inlinable
    public mutating func readObject<Key>(_ keys: JSONKeys<Key>, _ field: (inout JSONReader, Key?) throws -> Void) throws {
        // Generic only here, where it is inlined and specialized: the matching below runs on indexes.
        try readObject(matching: keys.table) { reader, index in try field(&reader, index.map { keys.keys[$0] }) }
    }

    @usableFromInline
    mutating func readObject(matching table: JSONKeyTable, _ field: (inout JSONReader, Int?) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if try consumeIf(UInt8(ascii: "}")) { return }
        repeat {
            let key = try readKey(table)
            try expect(UInt8(ascii: ":"))
            try field(&self, key)
        } while try consumeIf(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    /// Reads an array, calling `element` once per element; `element` must consume it.
    public mutating func readArray(_ element: (inout JSONReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        if try consumeIf(UInt8(ascii: "]")) { return }
        repeat { try element(&self) } while try consumeIf(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
    }

    /// What kind of value comes next: `{`, `[`, `"`, `t`, `f`, `n`, or a number's first byte.
    public mutating func peek() throws -> UInt8 {
        skipWhitespace()
        guard offset < bytes.count else { throw SyntaxError(offset: offset, reason: "the body ends early") }
        return bytes[offset]
    }

    // MARK: Typed values (a wrong type is a FieldError, after the value is skipped)

    public mutating func string(_ path: @autoclosure () -> String) throws -> String {
        guard try peek() == UInt8(ascii: "\"") else { try typeMismatch(path(), "a string") }
        return try readStringSyntax()
    }

    /// A string, or `nil` for `null`.
    public mutating func optionalString(_ path: @autoclosure () -> String) throws -> String? {
        if try readNull() { return nil }
        return try string(path())
    }

    public mutating func bool(_ path: @autoclosure () -> String) throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: try typeMismatch(path(), "of the expected type")
        }
    }

    /// A whole number that fits an `Int`, or `nil` for `null`.
    public mutating func optionalInt(_ path: @autoclosure () -> String) throws -> Int? {
        if try readNull() { return nil }
        // A string, object or literal where a number belongs concerns this field, not the body.
        let first = try peek()
        guard first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            try typeMismatch(path(), "of the expected type")
        }
        let start = offset
        let text = try readNumberSyntax()
        guard let value = Int(text) else {
            offset = start
            try typeMismatch(path(), "of the expected type")
        }
        return value
    }

    /// A whole number that fits an `Int`, or `nil` for `null`. As `JSONDecoder` reads an `Int`,
    /// a whole number may be written with a fraction or an exponent (`5.0`, `5e2`).
    ///
    /// - Throws: `FieldError` for a value that is not a number, a fraction (`3.5`), or a number
    ///   out of `Int`'s range (`1e300`).
    public mutating func optionalWholeNumber(_ path: @autoclosure () -> String) throws -> Int? {
        guard try isNumberNext() else {
            if try readNull() { return nil }
            try typeMismatch(path(), "of the expected type")
        }
        let text = try readNumberSyntax()
        if let value = Int(text) { return value }
        // Not plain digits: a fraction or an exponent, which may still make a whole number.
        guard let value = Double(text), value.isFinite, value >= -0x1p63, value < 0x1p63 else {
            throw FieldError(reason: "\(path()) is out of range")
        }
        guard value.rounded(.towardZero) == value else { throw FieldError(reason: "\(path()) is not a whole number") }
        return Int(value)
    }

    /// A number as a finite `Double`, or `nil` for `null`.
    ///
    /// - Throws: `FieldError` for a value that is not a number, or one too large for a `Double` (`1e400`).
    public mutating func optionalDouble(_ path: @autoclosure () -> String) throws -> Double? {
        guard try isNumberNext() else {
            if try readNull() { return nil }
            try typeMismatch(path(), "of the expected type")
        }
        guard let value = Double(try readNumberSyntax()), value.isFinite else { throw FieldError(reason: "\(path()) is out of range") }
        return value
    }

    /// An array of strings, or `nil` for `null`.
    public mutating func optionalStrings(_ path: @autoclosure () -> String) throws -> [String]? {
        if try readNull() { return nil }
        guard try peek() == UInt8(ascii: "[") else { try typeMismatch(path(), "of the expected type") }
        var strings: [String] = []
        try readArray { reader in strings.append(try reader.string(path())) }
        return strings
    }

    /// Consumes `null` if it comes next.
    public mutating func readNull() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// Skips the value that comes next, checking its syntax.
    ///
    /// - Throws: `SyntaxError` when it is not JSON, `TooDeepError` when it nests deeper than ``maxDepth``.
    public mutating func skipValue(depth: Int = 0) throws {
        guard depth < Self.maxDepth else {
            // Only JSON that is valid is too deep: a body cut short is broken, and worth another try.
            let start = offset
            try skipValueWithoutRecursion()
            throw TooDeepError(offset: start)
        }
        switch try peek() {
        case UInt8(ascii: "{"): try readObject { reader, _ in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["): try readArray { reader in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "\""): try skipStringSyntax()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try readNumberSyntax()
        }
    }

    /// Checks the syntax of the value that comes next as ``skipValue(depth:)`` does, with a
    /// stack of its open containers instead of recursion, so that any depth is checked.
    private mutating func skipValueWithoutRecursion() throws {
        var open: [UInt8] = []
        value: while true {
            switch try peek() {
            case UInt8(ascii: "{"):
                offset += 1
                if try consumeIf(UInt8(ascii: "}")) { break }
                open.append(UInt8(ascii: "}"))
                try skipStringSyntax()
                try expect(UInt8(ascii: ":"))
                continue value
            case UInt8(ascii: "["):
                offset += 1
                if try consumeIf(UInt8(ascii: "]")) { break }
                open.append(UInt8(ascii: "]"))
                continue value
            case UInt8(ascii: "\""): try skipStringSyntax()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: _ = try readNumberSyntax()
            }
            // A value ended: close the containers it ends, until one goes on with another value.
            while let close = open.last {
                if try consumeIf(UInt8(ascii: ",")) {
                    if close == UInt8(ascii: "}") {
                        try skipStringSyntax()
                        try expect(UInt8(ascii: ":"))
                    }
                    continue value
                }
                try expect(close)
                open.removeLast()
            }
            return
        }
    }

    /// The bytes from `start` (where a value began, after its white space) to here: a value just
    /// read, kept so that ``skip(ifNext:)`` recognises it when it comes again.
    public func bytes(since start: Int) -> [UInt8] {
        Array(bytes[start..<offset])
    }

    /// Consumes the value that comes next if its bytes are exactly `value` (from
    /// ``bytes(since:)``), so that a value met before need not be read again: the same bytes are
    /// the same value.
    ///
    /// - Important: `value` must be an object, an array or a string, which end themselves; a
    ///   number's bytes may begin a longer number. Anything else is never matched.
    public mutating func skip(ifNext value: [UInt8]) -> Bool {
        skipWhitespace()
        guard let first = value.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || first == UInt8(ascii: "\""),
              offset + value.count <= bytes.count,
              value.withUnsafeBufferPointer({ memcmp($0.baseAddress!, bytes.baseAddress! + offset, value.count) == 0 })
        else { return false }
        offset += value.count
        return true
    }

    /// Moves back to `offset` (where an item began) so that it can be skipped whole.
    public mutating func rewind(to offset: Int) { self.offset = offset }

    private mutating func isNumberNext() throws -> Bool {
        let byte = try peek()
        return byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte)
    }

    private mutating func typeMismatch(_ path: String, _ expected: String) throws -> Never {
        let isNull = try peek() == UInt8(ascii: "n")
        try skipValue()
        throw FieldError(reason: isNull ? "\(path) is null" : "\(path) is not \(expected)")
    }

    // MARK: Syntax

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard try peek() == byte else {
            throw SyntaxError(offset: offset, reason: "expected '\(Character(Unicode.Scalar(byte)))'")
        }
        offset += 1
    }

    private mutating func consumeIf(_ byte: UInt8) throws -> Bool {
        guard try peek() == byte else { return false }
        offset += 1
        return true
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count,
              memcmp(bytes.baseAddress! + offset, word.utf8Start, count) == 0
        else { throw SyntaxError(offset: offset, reason: "expected \(word)") }
        offset += count
    }

    /// The text of a number, checked against JSON's grammar.
    private mutating func readNumberSyntax() throws -> Substring {
        skipWhitespace()
        let start = offset
        func digits() -> Int {
            let from = offset
            while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) { offset += 1 }
            return offset - from
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let integerStart = offset
        let integerDigits = digits()
        guard integerDigits > 0 else { throw SyntaxError(offset: start, reason: "expected a value") }
        // `int = zero / ( digit1-9 *DIGIT )`: `012` and `-01` are not numbers (RFC 8259 §6).
        guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw SyntaxError(offset: integerStart, reason: "a number has a leading zero")
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw SyntaxError(offset: offset, reason: "a number has no digits after '.'") }
        }
        if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { throw SyntaxError(offset: offset, reason: "a number has no exponent digits") }
        }
        return Substring(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
    }

    /// A string; the common case (no escapes) is one scan and one copy.
    private mutating func readStringSyntax() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = offset
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

    /// The index of a key in `table`; a key with escapes is decoded first.
    private mutating func readKey(_ table: JSONKeyTable) throws -> Int? {
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
    private mutating func skipStringSyntax() throws {
        try expect(UInt8(ascii: "\""))
        let start = offset
        while offset < bytes.count {
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
    private mutating func readEscapedString(from start: Int) throws -> String {
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
    private func hex4(at i: Int) -> UInt32 {
        var value: UInt32 = 0
        for byte in bytes[i..<(i + 4)] {
            value = value << 4 | UInt32(byte <= 0x39 ? byte - 0x30 : (byte | 0x20) - 0x61 + 10)
        }
        return value
    }

    private mutating func readHex4() throws -> UInt32 {
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
