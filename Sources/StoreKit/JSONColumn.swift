import Foundation

/// How a store writes the JSON it keeps in text columns (`video_ids`, `labels`, `attachments`).
///
/// The two stores have always differed in two details, kept so that rows already stored
/// compare equal and are not rewritten: the SQLite store escapes control characters in its
/// string arrays as `\u00XX`, and PostgreSQL, whose text holds no NUL, turns NUL into U+FFFD.
public struct JSONDialect: Sendable {
    /// Control characters in `video_ids` and `labels` as `\u000a` rather than `\n` (attachments
    /// always use the short escapes, as `JSONEncoder` does).
    public var arraysEscapeControlsAsUnicode: Bool
    /// NUL as `\ufffd`.
    public var replacesNUL: Bool

    public init(arraysEscapeControlsAsUnicode: Bool, replacesNUL: Bool) {
        self.arraysEscapeControlsAsUnicode = arraysEscapeControlsAsUnicode
        self.replacesNUL = replacesNUL
    }

    public static let sqlite = JSONDialect(arraysEscapeControlsAsUnicode: true, replacesNUL: false)
    public static let postgres = JSONDialect(arraysEscapeControlsAsUnicode: false, replacesNUL: true)
}

/// Compact JSON written by hand, byte for byte what `JSONEncoder` with `.sortedKeys` and
/// `.withoutEscapingSlashes` writes (up to the ``JSONDialect``): `JSONEncoder` cost more than the
/// rest of a Bluesky post's row (`perf record`, Benchmarks/README.md).
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    let dialect: JSONDialect
    /// Whether the object being written has no member yet.
    private var objectIsEmpty = false

    init(dialect: JSONDialect, reserving capacity: Int = 0) {
        self.dialect = dialect
        bytes.reserveCapacity(capacity)
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func append(_ byte: UInt8) { bytes.append(byte) }

    mutating func append(raw: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: raw.utf8Start, count: raw.utf8CodeUnitCount))
    }

    mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        objectIsEmpty = true
    }

    mutating func endObject() { bytes.append(UInt8(ascii: "}")) }

    private mutating func key(_ name: StaticString) {
        if !objectIsEmpty { bytes.append(UInt8(ascii: ",")) }
        objectIsEmpty = false
        bytes.append(UInt8(ascii: "\""))
        append(raw: name)
        append(raw: "\":")
    }

    /// Appends a member with a string value; none when `value` is `nil`.
    mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        append(string: value)
    }

    /// Appends a member with a number value; none when `value` is `nil`.
    mutating func member(_ name: StaticString, _ value: (some BinaryInteger)?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Appends `text` as a JSON string; `unicodeControls` escapes every control character as
    /// `\u00XX`, otherwise `\b`, `\f`, `\n`, `\r` and `\t` take their short forms.
    mutating func append(string text: String, unicodeControls: Bool = false) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append(raw: "\\\"")
            case UInt8(ascii: "\\"): append(raw: "\\\\")
            case 0x00 where dialect.replacesNUL: append(raw: "\\ufffd")
            case 0x08 where !unicodeControls: append(raw: "\\b")
            case 0x0C where !unicodeControls: append(raw: "\\f")
            case UInt8(ascii: "\n") where !unicodeControls: append(raw: "\\n")
            case UInt8(ascii: "\r") where !unicodeControls: append(raw: "\\r")
            case UInt8(ascii: "\t") where !unicodeControls: append(raw: "\\t")
            case 0x00 ..< 0x20:
                let hex: StaticString = "0123456789abcdef"
                append(raw: "\\u00")
                bytes.append(hex.utf8Start[Int(byte >> 4)])
                bytes.append(hex.utf8Start[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A JSON array of strings, as `posts.video_ids` and `posts.labels` hold them (other tools use
/// `json_each` on them).
public enum JSONStringArray {
    public static func encode(_ strings: [String], dialect: JSONDialect) -> String {
        guard !strings.isEmpty else { return "[]" }
        var json = JSONWriter(dialect: dialect, reserving: strings.count * 24)
        json.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json.append(string: string, unicodeControls: dialect.arraysEscapeControlsAsUnicode)
        }
        json.append(UInt8(ascii: "]"))
        return json.text
    }

    /// The strings of a JSON array; `[]` for anything that is not one.
    public static func decode(_ json: String) -> [String] {
        // Most posts have no videos or labels; JSONDecoder costs microseconds even for `[]`.
        guard json != "[]" else { return [] }
        // What `encode` writes for strings with nothing to escape, read without JSONDecoder (an
        // export reads a million of these): `["a","b"]` with no `\` splits at `","`. Anything
        // else, another tool's spacing included, goes through the decoder.
        if let strings = plainStrings(json) { return strings }
        return (try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []
    }

    /// `["a","b"]` as `encode` writes strings without escapes, split on bytes (a combining mark
    /// after a quote would hide it from a split on characters); `nil` for anything else.
    private static func plainStrings(_ json: String) -> [String]? {
        let bytes = Array(json.utf8)
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ",")
        guard bytes.count >= 4, bytes[0] == UInt8(ascii: "["), bytes[1] == quote, bytes[bytes.count - 2] == quote,
              bytes[bytes.count - 1] == UInt8(ascii: "]"), !bytes.contains(UInt8(ascii: "\\")) else { return nil }
        var strings: [String] = []
        var start = 2
        var index = 2
        let end = bytes.count - 2
        while index < end {
            guard bytes[index] == quote else {
                index += 1
                continue
            }
            // Inside, a quote only ever opens `","`.
            guard index + 2 < end, bytes[index + 1] == comma, bytes[index + 2] == quote else { return nil }
            strings.append(String(decoding: bytes[start..<index], as: UTF8.self))
            index += 3
            start = index
        }
        strings.append(String(decoding: bytes[start..<end], as: UTF8.self))
        return strings
    }
}
