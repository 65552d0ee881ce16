import Foundation

/// JSON written straight into a byte buffer: the one JSON writer of feedsync, for what the
/// command line prints (`posts --json`, `search --json`, `export`) and what the stores keep in
/// their JSON columns.
///
/// It writes what `JSONEncoder` writes with `.sortedKeys` and `.withoutEscapingSlashes` (and,
/// in ``Layout/indented``, `.prettyPrinted`, with an empty array as `[]`): keys come in the
/// order they are written, so a caller writes them sorted; a member whose value is `nil` is
/// left out; a number is written as `JSONEncoder` writes it. `JSONEncoder` cost five times the
/// rest of an export, and more than the rest of a stored post's row.
///
///     var json = JSONWriter()
///     json.openObject()
///     json.string("id", "p1")
///     json.int("likes", 3)
///     json.closeObject()
///     String(decoding: json.bytes, as: UTF8.self)    // {"id":"p1","likes":3}
///
/// Strings are escaped per RFC 8259: `"` and `\`, and every C0 control (`\n`, `\r`, `\t`, `\b`,
/// `\f` by name, the rest as `\u00XX`); ``Escaping`` adds what a reader needs beyond that.
///
/// - Important: A value type with no I/O, so it can live in Core beside ``ISO8601Timestamp``:
///   it is the one place both the stores (below App) and App's commands can reach, and it
///   knows no wire format of any backend, only JSON's.
public struct JSONWriter: Sendable {
    /// What a string's escapes add to RFC 8259's.
    public struct Escaping: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// DEL, the C1 controls and the Unicode bidirectional overrides and isolates as
        /// `\uXXXX`, which JSON allows raw: text from a server never reaches a terminal as a
        /// control sequence (the set ``Terminal/safe(_:limit:)`` escapes).
        public static let terminalControls = Escaping(rawValue: 1)
        /// Every C0 control as `\u00XX`, none by its short name (`\u000a`, not `\n`).
        public static let controlsAsUnicode = Escaping(rawValue: 2)
        /// NUL as `\ufffd`: PostgreSQL's text and `jsonb` hold no NUL.
        public static let replacingNUL = Escaping(rawValue: 4)
    }

    /// How members and elements are laid out.
    public enum Layout: Sendable {
        /// No white space at all: a column, a line of JSON Lines.
        case compact
        /// `JSONEncoder`'s `.prettyPrinted`: one member or element a line, indented by two
        /// spaces, `"key" : value`; an empty array or object as `[]` or `{}`.
        case indented
    }

    /// The JSON written so far, as UTF-8.
    public var bytes: [UInt8] = []
    /// How strings are escaped.
    public let escaping: Escaping
    /// How members and elements are laid out.
    public let layout: Layout
    /// Whether the container being written has an element already (so the next needs a comma).
    private var needsComma = false
    /// Whether a key was just written, so its value follows on the same line.
    private var afterKey = false
    /// How many containers are open, for ``Layout/indented``.
    private var depth = 0

    /// A writer with an empty buffer.
    ///
    /// - Parameters:
    ///   - escaping: what strings' escapes add to RFC 8259's.
    ///   - layout: compact (the default) or indented.
    ///   - capacity: bytes to reserve up front.
    public init(escaping: Escaping = [], layout: Layout = .compact, reserving capacity: Int = 0) {
        self.escaping = escaping
        self.layout = layout
        bytes.reserveCapacity(capacity)
    }

    /// The JSON written so far, as a string.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Containers

    /// Starts an object; its keys must then come in the order the output should have (sorted).
    public mutating func openObject() { open(UInt8(ascii: "{")) }

    /// Ends the object opened last.
    public mutating func closeObject() { close(UInt8(ascii: "}")) }

    /// Starts an array.
    public mutating func openArray() { open(UInt8(ascii: "[")) }

    /// Ends the array opened last.
    public mutating func closeArray() { close(UInt8(ascii: "]")) }

    /// Writes `"key":` (`"key" : ` indented); the value follows.
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        if layout == .indented { bytes.append(UInt8(ascii: " ")) }
        bytes.append(UInt8(ascii: ":"))
        if layout == .indented { bytes.append(UInt8(ascii: " ")) }
        needsComma = false
        afterKey = true
    }

    /// Ends a line of JSON Lines, ready for the next value.
    public mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        needsComma = false
        afterKey = false
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        depth += 1
        needsComma = false
    }

    private mutating func close(_ bracket: UInt8) {
        depth -= 1
        // A container with an element ends on a line of its own; an empty one stays `[]`.
        if layout == .indented && needsComma { breakLine() }
        bytes.append(bracket)
        needsComma = true
        afterKey = false
    }

    /// What comes before a value or a key: a comma after an earlier element, and when
    /// indented a line break, unless the value follows its key.
    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        if afterKey {
            afterKey = false
        } else if layout == .indented && depth > 0 {
            breakLine()
        }
    }

    private mutating func breakLine() {
        bytes.append(UInt8(ascii: "\n"))
        for _ in 0..<depth { bytes.append(contentsOf: [0x20, 0x20]) }
    }

    // MARK: Values

    /// Writes a value already written by another compact writer (a post, rendered once and
    /// placed in several documents), as it is.
    public mutating func raw(_ value: [UInt8]) {
        separate()
        bytes.append(contentsOf: value)
        needsComma = true
    }

    /// Writes a string, escaped as ``escaping`` says.
    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
        needsComma = true
    }

    /// Writes text given as its UTF-8 bytes (a database column's), exactly as ``string(_:)``
    /// writes `String(decoding: utf8, as: UTF8.self)`: well-formed bytes are escaped as they
    /// are, without making a `String`; ill-formed ones are repaired as `String` repairs them.
    public mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        separate()
        Self.appendString(utf8: utf8, escaping: escaping, to: &bytes)
        needsComma = true
    }

    /// Writes `"key":value` only when `utf8` is present, as ``string(utf8:)`` writes it.
    public mutating func string(_ key: StaticString, utf8: UnsafeBufferPointer<UInt8>?) {
        guard let utf8 else { return }
        self.key(key)
        string(utf8: utf8)
    }

    /// Writes a whole number in decimal.
    ///
    /// Concrete types, not `some BinaryInteger`: a generic called from another module runs
    /// unspecialized, and an export writes a dozen numbers a post.
    public mutating func int(_ value: Int64) {
        separate()
        Self.appendDecimal(value, to: &bytes)
        needsComma = true
    }

    /// Writes a whole number in decimal.
    public mutating func int(_ value: Int) { int(Int64(value)) }

    /// Writes a number as `JSONEncoder` writes it (`30`, `12.5`, `-0`, `1e+16`); `null` for a
    /// value JSON cannot hold (an infinity or NaN).
    public mutating func double(_ value: Double) {
        separate()
        if !value.isFinite {
            bytes.append(contentsOf: "null".utf8)
        } else if value == value.rounded(), abs(value) < 1e15, value != 0 || value.sign == .plus {
            // Whole numbers below 2^53 print as `description` without its `.0`; digits are cheaper.
            Self.appendDecimal(Int64(value), to: &bytes)
        } else {
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            bytes.append(contentsOf: text.utf8)
        }
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    /// Writes a time as a string, as ``ISO8601Timestamp`` writes it.
    public mutating func date(_ value: Date) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        ISO8601Timestamp.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    // MARK: Members

    /// Writes `"key":value` only when `value` is present, as `JSONEncoder` omits a `nil`.
    public mutating func string(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        self.key(key)
        string(value)
    }

    /// Writes `"key":value` only when `value` is present.
    public mutating func int(_ key: StaticString, _ value: Int64?) {
        guard let value else { return }
        self.key(key)
        int(value)
    }

    /// Writes `"key":value` only when `value` is present.
    public mutating func int(_ key: StaticString, _ value: Int?) { int(key, value.map(Int64.init)) }

    /// Writes `"key":value` only when `value` is present.
    public mutating func double(_ key: StaticString, _ value: Double?) {
        guard let value else { return }
        self.key(key)
        double(value)
    }

    /// Writes `"key":value`.
    public mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bool(value)
    }

    /// Writes `"key":value` only when `value` is present.
    public mutating func date(_ key: StaticString, _ value: Date?) {
        guard let value else { return }
        self.key(key)
        date(value)
    }

    /// Writes `"key":[…]`, the strings in order (also when there are none).
    public mutating func strings(_ key: StaticString, _ values: [String]) {
        self.key(key)
        strings(values)
    }

    /// Writes an array of strings.
    public mutating func strings(_ values: [String]) {
        openArray()
        for value in values { string(value) }
        closeArray()
    }
}
