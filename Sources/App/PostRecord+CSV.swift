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
    /// the string when the bytes are well-formed: controls are escaped as ``Terminal/safe(_:limit:)``
    /// escapes them, byte by byte. Only while a secret is registered does a field that
    /// `Terminal.safe` would look at take the string's way, to be redacted as it is there.
    public static func appendCSVField(utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        guard JSONWriter.isWellFormed(utf8) else { return appendCSVField(String(decoding: utf8, as: UTF8.self), to: &bytes) }
        var quoted = false, looked = false, escaped = false
        var index = 0
        let count = utf8.count
        while index < count {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: "\""): quoted = true
            case 0x00..<0x20, 0x7F: looked = true; escaped = true
            case 0xC2, 0xE2:
                looked = true
                if CSVControl.length(utf8, at: index) > 0 { escaped = true }
            default: break
            }
            index += 1
        }
        if looked, Redaction.holdsAny { return appendCSVField(String(decoding: utf8, as: UTF8.self), to: &bytes) }
        if quoted { bytes.append(UInt8(ascii: "\"")) }
        if !quoted, !escaped {
            bytes.append(contentsOf: utf8)
        } else {
            index = 0
            while index < count {
                let byte = utf8[index]
                let control = escaped ? CSVControl.length(utf8, at: index) : 0
                if control > 0 {
                    CSVControl.appendEscape(utf8, at: index, length: control, to: &bytes)
                    index += control
                    continue
                }
                bytes.append(byte)
                if byte == UInt8(ascii: "\"") { bytes.append(byte) }
                index += 1
            }
        }
        if quoted { bytes.append(UInt8(ascii: "\"")) }
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

/// The characters ``Terminal/safe(_:limit:)`` escapes, found and escaped in well-formed UTF-8.
enum CSVControl {
    /// How many bytes the escaped character at `index` takes (C0, DEL, C1, a bidirectional
    /// override or isolate), or 0 when the byte there starts no such character.
    @inline(__always)
    static func length(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        let byte = utf8[index]
        if byte < 0x20 || byte == 0x7F { return 1 }
        if byte == 0xC2 { return index + 1 < utf8.count && utf8[index + 1] <= 0x9F ? 2 : 0 }  // U+0080...U+009F
        guard byte == 0xE2, index + 2 < utf8.count else { return 0 }
        switch (utf8[index + 1], utf8[index + 2]) {
        case (0x80, 0xAA...0xAE), (0x81, 0xA6...0xA9): return 3  // U+202A...U+202E, U+2066...U+2069
        default: return 0
        }
    }

    /// Appends the escape `Terminal.safe` writes for the character: `\n`, `\r`, `\t`, else `\u{…}`
    /// in lowercase hexadecimal.
    static func appendEscape(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int, length: Int, to bytes: inout [UInt8]) {
        let scalar: UInt32
        switch length {
        case 1: scalar = UInt32(utf8[index])
        case 2: scalar = UInt32(utf8[index] & 0x1F) << 6 | UInt32(utf8[index + 1] & 0x3F)
        default: scalar = UInt32(utf8[index] & 0x0F) << 12 | UInt32(utf8[index + 1] & 0x3F) << 6 | UInt32(utf8[index + 2] & 0x3F)
        }
        switch scalar {
        case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "{")])
            bytes.append(contentsOf: String(scalar, radix: 16).utf8)
            bytes.append(UInt8(ascii: "}"))
        }
    }
}
