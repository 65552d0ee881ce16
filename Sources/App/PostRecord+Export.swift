import Core
import Foundation

/// The two export formats, written by hand for speed: a million posts in seconds.
extension PostRecord {
    /// Appends the record as one line of JSON Lines: the same object `JSONEncoder` makes of
    /// it with sorted keys and no `nil` members (`posts --json` prints that shape), dates as
    /// ``ISO8601Timestamp`` writes them.
    public func appendJSONLine(to json: inout JSONText) {
        json.openObject()
        json.key("attachments")
        json.openArray()
        for attachment in attachments {
            json.openObject()
            json.string("description", attachment.description)
            json.double("durationSeconds", attachment.durationSeconds)
            json.int("episode", attachment.episode)
            json.int("height", attachment.height)
            json.string("kind", attachment.kind)
            json.string("mimeType", attachment.mimeType)
            json.string("previewURL", attachment.previewURL?.absoluteString)
            json.int("season", attachment.season)
            json.int("sizeBytes", attachment.sizeBytes)
            json.string("title", attachment.title)
            json.string("url", attachment.url.absoluteString)
            json.int("width", attachment.width)
            json.closeObject()
        }
        json.closeArray()
        json.key("author")
        Self.append(author, to: &json)
        json.string("contentWarning", contentWarning)
        json.key("counts")
        json.openObject()
        json.int("likes", counts.likes)
        json.int("quotes", counts.quotes)
        json.int("replies", counts.replies)
        json.int("reposts", counts.reposts)
        json.closeObject()
        json.date("createdAt", createdAt)
        json.date("editedAt", editedAt)
        json.string("feed", feed)
        json.string("html", html)
        json.string("id", id)
        json.strings("labels", labels)
        json.string("language", language)
        json.string("quoteOf", quoteOf)
        json.key("read")
        json.bool(read)
        json.string("replyTo", replyTo)
        if let repost {
            json.key("repost")
            json.openObject()
            json.date("at", repost.at)
            json.key("by")
            Self.append(repost.by, to: &json)
            json.string("originalID", repost.originalID)
            json.closeObject()
        }
        json.string("text", text)
        json.string("title", title)
        json.string("url", url?.absoluteString)
        json.strings("videoIDs", videoIDs)
        json.key("videos")
        json.openArray()
        for video in videos {
            json.openObject()
            json.double("durationSeconds", video.durationSeconds)
            json.double("framesPerSecond", video.framesPerSecond)
            json.int("height", video.height)
            json.string("id", video.id)
            json.double("rating", video.rating)
            json.int("sizeBytes", video.sizeBytes)
            json.string("streamURL", video.streamURL.absoluteString)
            json.string("thumbnailURL", video.thumbnailURL?.absoluteString)
            json.string("title", video.title)
            json.int("viewCount", video.viewCount)
            json.int("width", video.width)
            json.closeObject()
        }
        json.closeArray()
        json.string("visibility", visibility)
        json.closeObject()
        json.newline()
    }

    private static func append(_ author: Author, to json: inout JSONText) {
        json.openObject()
        json.string("avatarURL", author.avatarURL?.absoluteString)
        json.string("displayName", author.displayName)
        json.string("handle", author.handle)
        json.string("id", author.id)
        json.closeObject()
    }

    /// The CSV columns: the post's own fields flattened, lists joined by spaces.
    public static let csvColumns = ["feed", "id", "created_at", "edited_at", "author_id", "author_handle", "author_name", "text", "title",
                                    "url", "reply_to", "replies", "reposts", "likes", "quotes", "repost_by", "repost_of", "video_ids",
                                    "video_urls", "language", "content_warning", "read"]

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
        ], to: &bytes)
    }

    private static func appendCSVRow(_ fields: [String], to bytes: inout [UInt8]) {
        for (index, field) in fields.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendCSVField(field, to: &bytes)
        }
        bytes.append(contentsOf: [0x0D, 0x0A])
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
