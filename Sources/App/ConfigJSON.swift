import Core
import Foundation

/// Reads a config file's JSON strictly: exactly RFC 8259, with errors that give a line and column.
///
/// `JSONDecoder` lets the last of two equal keys win silently, accepts trailing commas on Linux
/// and reports failures without a position; an operator editing a config file deserves all three
/// caught and pointed at. Accepted is one value with only whitespace around it (a UTF-8 byte order
/// mark at the start is skipped). Refused, each with its own message: comments, trailing commas,
/// single quotes, NaN and Infinity, leading zeros, numbers too large for a `Double`, control
/// characters, bad escapes and unpaired surrogates in strings, invalid UTF-8, a key written twice
/// in one object, and nesting deeper than ``maximumDepth``.
///
/// ```swift
/// do {
///     let root = try ConfigJSON.parse(data)
/// } catch {
///     print("feedsync.json: \(error)")  // feedsync.json: line 4, column 17: trailing comma before "}"
/// }
/// ```
public enum ConfigJSON {
    /// Where and why a config file is not the JSON it must be.
    ///
    /// Messages quote printable characters and name any other as `U+0009`, so no raw byte of the
    /// file reaches the terminal that shows them.
    public struct SyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The line, from 1; a line ends at LF, CRLF or a lone CR.
        public var line: Int
        /// The column, from 1, counted in Unicode scalars: "é" and "東" are one column each.
        public var column: Int
        /// What is wrong, as a phrase: `duplicate key "feeds" (first at line 2, column 3)`.
        public var message: String

        public init(line: Int, column: Int, message: String) {
            (self.line, self.column, self.message) = (line, column, message)
        }

        /// `line 4, column 17: trailing comma before "}"`.
        public var description: String { "line \(line), column \(column): \(message)" }
    }

    /// The deepest nesting of arrays and objects a config file may have.
    public static let maximumDepth = 64

    /// Reads `bytes` as one strict JSON document.
    ///
    /// - Throws: ``SyntaxError`` at the first place the bytes are not strict JSON.
    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> ConfigValue {
        var parser = ConfigJSONParser(bytes)
        return try parser.document()
    }

    /// Reads `data` as one strict JSON document.
    ///
    /// - Throws: ``SyntaxError`` at the first place the data is not strict JSON.
    public static func parse(_ data: Data) throws(SyntaxError) -> ConfigValue {
        try parse([UInt8](data))
    }
}
