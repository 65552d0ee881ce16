import Foundation

/// Reading a body whose fields may be of another type than expected (a server's JSON): the
/// field's value is skipped and read as absent, and the rest of the body stands.
extension JSONReader {
    /// What `read` reads, or `nil` when the value is of another type (a ``FieldError``: the
    /// value is skipped by then).
    ///
    ///     item.title = try reader.lenient { try $0.optionalString("title") }
    public mutating func lenient<T>(_ read: (inout JSONReader) throws -> T?) throws -> T? {
        do { return try read(&self) } catch is FieldError { return nil }
    }

    /// A string, or `nil` for `null` or a value of another type (skipped).
    public mutating func stringOrSkip() throws -> String? {
        try lenient { try $0.optionalString("") }
    }

    /// Reads an object's fields as ``readObject(_:)`` does; a value that is not an object is skipped.
    public mutating func readObjectOrSkip(_ field: (inout JSONReader, String) throws -> Void) throws {
        guard try peek() == UInt8(ascii: "{") else { return try skipValue() }
        try readObject(field)
    }
}
