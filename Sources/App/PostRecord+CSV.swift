import Core
import Foundation

/// The CSV export, written by hand for speed: a million posts in seconds.
extension PostRecord {
    /// The CSV columns: the post's own fields flattened, lists joined by spaces.
    public static let csvColumns = ["feed", "id", "created_at", "edited_at", "author_id", "author_handle", "author_name", "text", "title",
                                    "url", "reply_to", "replies", "reposts", "likes", "quotes", "repost_by", "repost_of", "video_ids",
                                    "video_urls", "language", "content_warning", "read", "starred"]

    /// The CSV header line, ended by CR LF (RFC 4180).
    public static func appendCSVHeader(to bytes: inout [UInt8]) {
        appendCSVRow(csvColumns, to: &bytes)
    }

    /// Appends the record as one CSV row (RFC 4180, CR LF), each field as ``appendCSVField(_:to:)`` writes it.
    public func appendCSVRow(to bytes: inout [UInt8]) {
        var created: [UInt8] = []
        ISO8601Timestamp.append(createdAt, to: &created)
        let edited = editedAt.map(ISO8601Timestamp.string(from:)) ?? ""
        Self.appendCSVRow([
            feed, id, String(decoding: created, as: UTF8.self), edited, author.id, author.handle, author.displayName, text, title ?? "",
            url?.absoluteString ?? "", replyTo ?? "", String(counts.replies), String(counts.reposts), String(counts.likes),
            String(counts.quotes), repost?.by.handle ?? "", repost?.originalID ?? "", videoIDs.joined(separator: " "),
            videos.map(\.streamURL.absoluteString).joined(separator: " "), language ?? "", contentWarning ?? "", read ? "1" : "0",
            starred ? "1" : "0",
        ], to: &bytes)
    }

    private static func appendCSVRow(_ fields: [String], to bytes: inout [UInt8]) {
        for (index, field) in fields.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendCSVField(field, to: &bytes)
        }
        bytes.append(contentsOf: [0x0D, 0x0A])
    }

    /// A CSV field given as UTF-8 bytes (a database column's), written exactly as
    /// ``appendCSVField(_:to:)`` writes `String(decoding: utf8, as: UTF8.self)`, without making
    /// the string when the bytes are well-formed and hold nothing to escape.
    public static func appendCSVField(utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        guard JSONWriter.isWellFormed(utf8), !utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else {
            return appendCSVField(String(decoding: utf8, as: UTF8.self), to: &bytes)
        }
        guard utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") }) else {
            bytes.append(contentsOf: utf8)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        for byte in utf8 {
            bytes.append(byte)
            if byte == UInt8(ascii: "\"") { bytes.append(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A CSV field: control characters escaped exactly as `posts` shows them
    /// (``Terminal/safe(_:limit:)``: a line break as `\n`, ESC as `\u{1b}`), so no text from a
    /// server reaches a terminal or a spreadsheet as a control sequence; then RFC 4180's quoting:
    /// a field with a comma or a quote is quoted, its quotes doubled.
    public static func appendCSVField(_ value: String, to bytes: inout [UInt8]) {
        var value = value
        if value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) {
            value = Terminal.safe(value)
        }
        guard value.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }) else {
            bytes.append(contentsOf: value.utf8)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            bytes.append(byte)
            if byte == UInt8(ascii: "\"") { bytes.append(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
