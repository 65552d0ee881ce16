import Foundation

/// A forward-only JSON reader over a response body's bytes.
///
/// The feed decoder reads each field straight into its DTO. This skips the generic `Codable`
/// containers and key dictionaries that dominated a sync's CPU time (half of it, under
/// `perf`).
/// - A syntax error (`JSONReader.SyntaxError`) makes the whole body unreadable.
/// - A value of the wrong type (`JSONReader.FieldError`) concerns one field only. The caller
///   can drop the item it belongs to and go on after it.
///
/// Here: structure (objects, arrays, skipping). Beside it: its errors (`JSONReader+Errors`),
/// typed values (`+TypedValues`), the scanner (`+Syntax`) and strings (`+Strings`).
public struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    public internal(set) var offset = 0
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
}
