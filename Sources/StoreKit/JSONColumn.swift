import Core
import Foundation

extension SQLDialect {
    /// How a store escapes the strings of the JSON it keeps in text columns (`video_ids`,
    /// `labels`, `attachments`) and sends as `jsonb` parameters: as `JSONEncoder` writes them
    /// (RFC 8259's escapes, the short ones where JSON has them), the same text in both stores,
    /// but for NUL where the text cannot hold it (``textHoldsNUL``): PostgreSQL's `jsonb` refuses
    /// `\u0000`, so its store writes `\ufffd`, the U+FFFD its other text columns hold for a NUL.
    ///
    /// Stores written before both used this rule kept `\u000a` for a line break in their string
    /// arrays (SQLite's); such a row reads back the same, and is rewritten in this form the next
    /// time a page carries its post.
    public var jsonEscaping: JSONWriter.Escaping { textHoldsNUL ? [] : .replacingNUL }
}

/// A JSON array of strings, as `posts.video_ids` and `posts.labels` hold them (other tools use
/// `json_each` on them).
public enum JSONStringArray {
    public static func encode(_ strings: [String], dialect: SQLDialect) -> String {
        guard !strings.isEmpty else { return "[]" }
        var json = JSONWriter(escaping: dialect.jsonEscaping, reserving: strings.count * 24)
        json.strings(strings)
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
