import Core
import Foundation
import StoreKit

/// A plain row's line of JSON Lines, written straight into the page's bytes: the keys and the
/// punctuation between them as literal runs (a row's shape is fixed), each text column escaped
/// from its bytes (``JSONWriter/appendString(utf8:escaping:to:)``), numbers and times into the
/// buffer. The same bytes as ``PostRecord/write(to:)`` writes for the post the row makes
/// (`PostRowEncoderTests`), without a call into ``JSONWriter``'s bookkeeping per member.
extension PostRowEncoder {
    /// Writes what ``PostRecord/write(to:)`` writes for this row, in its key order, escaping
    /// strings as `escaping` says. The row is plain (``isPlain(_:in:)``): no attachments, no
    /// labels, not a repost; its id, author id, text and feed are present.
    mutating func writePlainJSON(_ index: Int, of batch: PostRowBatch, escaping: JSONWriter.Escaping, to out: inout [UInt8]) {
        let row = batch.row(index)
        func literal(_ text: StaticString) { text.withUTF8Buffer { out.append(contentsOf: $0) } }
        /// `key` (with the comma before it) and the column's text, when the column holds one.
        func member(_ key: StaticString, _ column: Column) {
            batch.withText(index, at[column.rawValue]) { utf8 in
                guard let utf8 else { return }
                literal(key)
                JSONWriter.appendString(utf8: utf8, escaping: escaping, to: &out)
            }
        }
        func member(_ key: StaticString, _ value: String?) {
            guard let value else { return }
            literal(key)
            JSONWriter.appendString(value, escaping: escaping, to: &out)
        }
        func number(_ key: StaticString, _ column: Column) {
            literal(key)
            JSONWriter.appendDecimal(row.integer(at[column.rawValue]) ?? 0, to: &out)
        }
        func time(_ key: StaticString, _ milliseconds: Int64) {
            literal(key)
            ISO8601Timestamp.append(StoredTime.date(milliseconds), to: &out)
            out.append(UInt8(ascii: "\""))
        }
        func flag(_ key: StaticString, _ column: Column) {
            literal(key)
            if row.integer(at[column.rawValue]) != nil { literal("true") } else { literal("false") }
        }

        literal(#"{"attachments":[],"author":{"#)
        let avatar = batch.withText(index, at[Column.avatarURL.rawValue]) { bytes in bytes.map { avatarURL($0) } ?? nil }
        if let avatar {
            literal(#""avatarURL":"#)
            JSONWriter.appendString(avatar, escaping: escaping, to: &out)
            out.append(UInt8(ascii: ","))
        }
        // As `UserColumns.user` fills them: the handle, else the id; the name, else the handle
        // shown. Each of the three is present: the author id is (a plain row's).
        let shown: Column = batch.isNull(index, at[Column.handle.rawValue]) ? .authorID : .handle
        member(#""displayName":"#, batch.isNull(index, at[Column.displayName.rawValue]) ? shown : .displayName)
        member(#","handle":"#, shown)
        member(#","id":"#, .authorID)
        literal("}")
        member(#","contentWarning":"#, .contentWarning)
        number(#","counts":{"likes":"#, .likes)
        number(#","quotes":"#, .quotes)
        number(#","replies":"#, .replies)
        number(#","reposts":"#, .reposts)
        time(#"},"createdAt":""#, row.integer(at[Column.createdAt.rawValue]) ?? 0)
        if let edited = row.integer(at[Column.editedAt.rawValue]) { time(#","editedAt":""#, edited) }
        member(#","feed":"#, .feed)
        member(#","html":"#, .html)
        member(#","id":"#, .id)
        literal(#","labels":[]"#)
        member(#","language":"#, .language)
        member(#","quoteOf":"#, .quoteOf)
        flag(#","read":"#, .readAt)
        member(#","replyTo":"#, .replyTo)
        flag(#","starred":"#, .starredAt)
        member(#","text":"#, .text)
        member(#","title":"#, .title)
        member(#","url":"#, row.text(at[Column.url.rawValue]).flatMap(URL.init(string:))?.absoluteString)
        literal(#","videoIDs":["#)
        if !isEmptyList(.videoIDs, index, in: batch) {
            for (position, id) in JSONStringArray.decode(row.text(at[Column.videoIDs.rawValue]) ?? "[]").enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(id, escaping: escaping, to: &out)
            }
        }
        literal(#"],"videos":["#)
        if !batch.videos[index].isEmpty {
            var videos = JSONWriter(escaping: escaping)
            for video in batch.videos[index] { PostRecord.write(PostRecord.VideoRow(video), to: &videos) }
            out.append(contentsOf: videos.bytes)
        }
        literal("]")
        member(#","visibility":"#, row.text(at[Column.visibility.rawValue]).flatMap(Post.Visibility.init(rawValue:))?.rawValue)
        literal("}")
    }
}
