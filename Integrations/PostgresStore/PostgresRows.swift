import Core
import Foundation
import StoreKit

extension PostColumns {
    /// The staging table a page's posts are copied into, column for column in the codec's order.
    static let stagingTable = """
        CREATE TEMP TABLE IF NOT EXISTS page_posts (\(columns.map { "\($0.name) \($0.kind == .text ? "text" : "bigint")" }
            .joined(separator: ", "))) ON COMMIT DELETE ROWS
        """
}

/// Times are stored as whole milliseconds since 1970 (``StoredTime``, shared with SQLite).
func milliseconds(_ date: Date) -> Int64 { StoredTime.milliseconds(date) }

extension Date {
    init(pgMilliseconds text: String?) { self.init(timeIntervalSince1970: Double(Int64(text ?? "") ?? 0) / 1000) }
}

/// Compact JSON with sorted keys, for a `jsonb` parameter (a page's authors, resolved videos).
///
/// PostgreSQL's text and `jsonb` hold no NUL character, so a NUL a server sent (`\u0000` in the
/// JSON) becomes U+FFFD, as everywhere else this store writes text.
func jsonText<T: Encodable>(_ value: T) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "[]" }
    return String(decoding: withoutNULEscapes(Array(data)), as: UTF8.self)
}

/// `\u0000` escapes replaced by `\ufffd`; an escaped backslash before `u0000` is left alone.
private func withoutNULEscapes(_ json: [UInt8]) -> [UInt8] {
    let escape: [UInt8] = Array("\\u0000".utf8)
    guard json.count >= escape.count else { return json }
    var out = json
    var index = 0
    while index < out.count {
        guard out[index] == UInt8(ascii: "\\") else { index += 1; continue }
        if index + escape.count <= out.count, Array(out[index..<(index + escape.count)]) == escape {
            out.replaceSubrange((index + 2)..<(index + 6), with: Array("fffd".utf8))
        }
        index += 2   // an escape is two characters at least: a backslash never escapes the next one twice
    }
    return out
}

/// Text for a libpq parameter: a NUL would end the C string there, so it becomes U+FFFD.
func withoutNUL(_ text: String) -> String {
    text.utf8.contains(0) ? text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : text
}
