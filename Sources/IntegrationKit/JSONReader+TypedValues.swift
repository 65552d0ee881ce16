import Foundation

/// Typed values: a value of the wrong type is a `FieldError`, after the value is skipped, so
/// the caller can drop the one item it belongs to.
extension JSONReader {
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

    mutating func isNumberNext() throws -> Bool {
        let byte = try peek()
        return byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte)
    }

    mutating func typeMismatch(_ path: String, _ expected: String) throws -> Never {
        let isNull = try peek() == UInt8(ascii: "n")
        try skipValue()
        throw FieldError(reason: isNull ? "\(path) is null" : "\(path) is not \(expected)")
    }
}
