import Core
import Foundation
import StoreKit

/// Writes a page of raw rows (``PostRowBatch``) as `export` writes posts: the same bytes as
/// ``PostRecord`` written from the stored post the row makes, without making it.
///
/// A JSON line or CSV row is written from the columns' bytes: no `String`, `URL` or `Date` per
/// post (a CSV field's controls are escaped byte by byte, ``PostRecord/appendCSVField(utf8:to:)``).
/// A row with what only the full record maps (attachments, labels, a repost) is made into its
/// ``StoredPost`` and written by ``PostRecord``. `ExportBytesTests` and `PostRowEncoderTests`
/// hold the two ways to the same bytes.
public struct PostRowEncoder {
    private var columns: StoredPostColumns
    let at: [Int]
    /// Avatar URLs as `URL` writes them back, by their stored text: a page holds a few dozen.
    private var avatars: [UInt64: (bytes: [UInt8], url: String?)] = [:]

    enum Column: Int, CaseIterable {
        case id, authorID, text, createdAt, editedAt, replyTo, replies, reposts, likes, videoIDs, html, contentWarning
        case language, visibility, repostBy, attachments, title, url, quoteOf, quotes, labels
        case feed, readAt, starredAt, handle, displayName, avatarURL
    }

    private static let names = ["id", "author_id", "text", "created_at", "edited_at", "reply_to", "reply_count", "repost_count",
                                "like_count", "video_ids", "html", "content_warning", "language", "visibility", "repost_by",
                                "attachments", "title", "url", "quote_of", "quote_count", "labels", "feed", "read_at", "starred_at",
                                "author_handle", "author_display_name", "author_avatar_url"]

    /// - Throws: ``MissingColumn`` when the batch lacks a column a post is read from.
    public init(_ layout: ColumnLayout) throws {
        columns = try StoredPostColumns(layout)
        at = try Self.names.map(layout.position(of:))
    }

    /// Appends each row as one line of JSON Lines.
    public mutating func appendJSONLines(_ batch: PostRowBatch, to json: inout JSONWriter) {
        for row in 0..<batch.count {
            if isPlain(row, in: batch) {
                writePlainJSON(row, of: batch, escaping: json.escaping, to: &json.bytes)
            } else {
                PostRecord(batch.storedPost(row, reading: &columns)).write(to: &json)
            }
            json.newline()
        }
    }

    /// Appends each row as one CSV row.
    public mutating func appendCSVRows(_ batch: PostRowBatch, to bytes: inout [UInt8]) {
        for row in 0..<batch.count {
            if isPlain(row, in: batch) {
                writePlainCSV(row, of: batch, to: &bytes)
            } else {
                PostRecord(batch.storedPost(row, reading: &columns)).appendCSVRow(to: &bytes)
            }
        }
    }

    /// Writes what ``PostRecord/appendCSVRow(to:)`` writes for this row, in its column order.
    private mutating func writePlainCSV(_ index: Int, of batch: PostRowBatch, to bytes: inout [UInt8]) {
        let row = batch.row(index)
        func text(_ column: Column) {
            batch.withText(index, at[column.rawValue]) { utf8 in
                if let utf8 { PostRecord.appendCSVField(utf8: utf8, to: &bytes) }
            }
        }
        func field(_ value: String) { PostRecord.appendCSVField(value, to: &bytes) }
        func comma() { bytes.append(UInt8(ascii: ",")) }
        func time(_ column: Column) {
            if let milliseconds = row.integer(at[column.rawValue]) { ISO8601Timestamp.append(StoredTime.date(milliseconds), to: &bytes) }
        }
        func number(_ column: Column) { JSONWriter.appendDecimal(row.integer(at[column.rawValue]) ?? 0, to: &bytes) }
        let shown: Column = batch.isNull(index, at[Column.handle.rawValue]) ? .authorID : .handle
        text(.feed); comma(); text(.id); comma(); time(.createdAt); comma(); time(.editedAt); comma()
        text(.authorID); comma(); text(shown); comma()
        text(batch.isNull(index, at[Column.displayName.rawValue]) ? shown : .displayName); comma()
        text(.text); comma(); text(.title); comma()
        field(row.text(at[Column.url.rawValue]).flatMap(URL.init(string:))?.absoluteString ?? ""); comma()
        text(.replyTo); comma()
        number(.replies); comma(); number(.reposts); comma(); number(.likes); comma(); number(.quotes); comma()
        comma()  // not a repost: no reposter, no original
        comma()
        if !isEmptyList(.videoIDs, index, in: batch) {
            field(JSONStringArray.decode(row.text(at[Column.videoIDs.rawValue]) ?? "[]").joined(separator: " "))
        }
        comma()
        if !batch.videos[index].isEmpty { field(batch.videos[index].map(\.stream.absoluteString).joined(separator: " ")) }
        comma()
        text(.language); comma(); text(.contentWarning); comma()
        bytes.append(row.integer(at[Column.readAt.rawValue]) != nil ? UInt8(ascii: "1") : UInt8(ascii: "0")); comma()
        bytes.append(row.integer(at[Column.starredAt.rawValue]) != nil ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        bytes.append(contentsOf: [0x0D, 0x0A])
    }

    /// Whether the row has nothing but what ``writePlainJSON(_:of:escaping:to:)`` writes: no attachments, no labels,
    /// not a repost, and every column the schema requires.
    func isPlain(_ row: Int, in batch: PostRowBatch) -> Bool {
        // A NULL where the schema forbids one reads as "" in the record: left to it.
        isEmptyList(.attachments, row, in: batch) && isEmptyList(.labels, row, in: batch) && batch.isNull(row, at[Column.repostBy.rawValue])
            && !batch.isNull(row, at[Column.id.rawValue]) && !batch.isNull(row, at[Column.authorID.rawValue])
            && !batch.isNull(row, at[Column.text.rawValue]) && !batch.isNull(row, at[Column.feed.rawValue])
    }

    /// Whether a JSON list column holds `[]` (or is NULL, which reads as no list).
    func isEmptyList(_ column: Column, _ row: Int, in batch: PostRowBatch) -> Bool {
        batch.withText(row, at[column.rawValue]) { $0.map { $0.count == 2 && $0[0] == UInt8(ascii: "[") && $0[1] == UInt8(ascii: "]") } ?? true }
    }

    /// An avatar URL as `URL` writes it back, parsed once per distinct stored text (found by
    /// its FNV-1a hash, then compared byte for byte).
    mutating func avatarURL(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let hash = FNV1a.hash(bytes)
        if let known = avatars[hash], known.bytes.count == bytes.count,
           bytes.isEmpty || known.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
            return known.url
        }
        let url = URL(string: String(decoding: bytes, as: UTF8.self))?.absoluteString
        if avatars[hash] == nil { avatars[hash] = (Array(bytes), url) }
        return url
    }
}
