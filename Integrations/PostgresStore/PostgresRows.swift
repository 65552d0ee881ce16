import Core
import Foundation

/// A post as one line of the COPY into `page_posts`, named for the `posts` columns.
struct PostgresPostRow {
    var id: String
    var author_id: String
    var text: String
    var created_at: Int64
    var edited_at: Int64?
    var reply_to: String?
    var reply_count: Int64
    var repost_count: Int64
    var like_count: Int64
    var video_ids: String
    var html: String?
    var content_warning: String?
    var language: String?
    var visibility: String?
    var repost_by: String?
    var repost_of: String?
    var attachments: String
    var title: String?
    var url: String?
    var quote_of: String?
    var quote_count: Int64
    var labels: String
    var repost_at: Int64?

    init(_ post: Post) {
        id = post.id.rawValue
        author_id = post.author.id.rawValue
        text = post.text
        created_at = milliseconds(post.createdAt)
        edited_at = post.editedAt.map(milliseconds)
        reply_to = post.replyTo?.rawValue
        reply_count = Int64(post.counts.replies)
        repost_count = Int64(post.counts.reposts)
        like_count = Int64(post.counts.likes)
        video_ids = jsonText(post.videoIDs.map(\.rawValue))
        html = post.html
        content_warning = post.contentWarning
        language = post.language
        visibility = post.visibility?.rawValue
        repost_by = post.repost?.by.id.rawValue
        repost_of = post.repost?.originalID.rawValue
        attachments = post.attachments.isEmpty ? "[]" : jsonText(post.attachments.map(PostgresAttachment.init))
        title = post.title
        url = post.url?.absoluteString
        quote_of = post.quoteOf?.rawValue
        quote_count = Int64(post.counts.quotes)
        labels = jsonText(post.labels)
        repost_at = post.repost?.at.map(milliseconds)
    }
}

extension PostgresPostRow {
    /// The staging table a page's posts are copied into, column for column.
    static let stagingTable = """
        CREATE TEMP TABLE IF NOT EXISTS page_posts (id text, author_id text, text text, created_at bigint, edited_at bigint,
            reply_to text, reply_count bigint, repost_count bigint, like_count bigint, video_ids text, html text,
            content_warning text, language text, visibility text, repost_by text, repost_of text, attachments text, title text,
            url text, quote_of text, quote_count bigint, labels text, repost_at bigint) ON COMMIT DELETE ROWS
        """

    /// Appends the row in COPY's text format: fields split by tabs, `\N` for NULL, and
    /// backslash, tab, newline and carriage return escaped.
    func appendCopyLine(to out: inout [UInt8]) {
        func text(_ value: String?) {
            guard let value else { out.append(contentsOf: [0x5C, 0x4E]); return }   // \N
            for byte in value.utf8 {
                switch byte {
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x09: out.append(contentsOf: [0x5C, 0x74])
                case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: out.append(contentsOf: [0x5C, 0x72])
                case 0x00: out.append(contentsOf: [0xEF, 0xBF, 0xBD])   // PostgreSQL text holds no NUL: U+FFFD
                default: out.append(byte)
                }
            }
        }
        func number(_ value: Int64?) {
            guard let value else { out.append(contentsOf: [0x5C, 0x4E]); return }
            out.append(contentsOf: String(value).utf8)
        }
        func tab() { out.append(0x09) }
        text(id); tab(); text(author_id); tab(); text(self.text); tab(); number(created_at); tab(); number(edited_at); tab()
        text(reply_to); tab(); number(reply_count); tab(); number(repost_count); tab(); number(like_count); tab()
        text(video_ids); tab(); text(html); tab(); text(content_warning); tab(); text(language); tab(); text(visibility); tab()
        text(repost_by); tab(); text(repost_of); tab(); text(attachments); tab(); text(title); tab(); text(url); tab()
        text(quote_of); tab(); number(quote_count); tab(); text(labels); tab(); number(repost_at)
        out.append(0x0A)
    }
}

/// An author with the time of the newest post on the page that carried the profile.
struct PostgresUserRow: Codable {
    var id: String
    var handle: String
    var display_name: String
    var avatar_url: String?
    var profile_at: Int64
}

/// A resolved video, named for the `videos` columns.
struct PostgresVideoRow: Codable {
    var id: String
    var title: String
    var duration_ms: Int64
    var stream_url: String
    var thumbnail_url: String?
    var size_bytes: Int64?
    var width: Int64?
    var height: Int64?
    var fps: Double?

    init(_ video: Video) {
        id = video.id.rawValue
        title = video.title
        duration_ms = Int64(exactly: (video.duration * 1000).rounded()) ?? 0
        stream_url = video.streamURL.absoluteString
        thumbnail_url = video.thumbnailURL?.absoluteString
        size_bytes = video.sizeBytes
        width = video.width.map(Int64.init)
        height = video.height.map(Int64.init)
        fps = video.framesPerSecond
    }
}

/// An attachment as the `attachments` column holds it (the same JSON as the SQLite store's).
struct PostgresAttachment: Codable {
    var kind: String
    var url: String
    var preview_url: String?
    var description: String?
    var title: String?
    var mime_type: String?
    var size_bytes: Int64?
    var width: Int?
    var height: Int?

    init(_ attachment: Post.Attachment) {
        kind = attachment.kind
        url = attachment.url.absoluteString
        preview_url = attachment.previewURL?.absoluteString
        description = attachment.description
        title = attachment.title
        mime_type = attachment.mimeType
        size_bytes = attachment.sizeBytes
        width = attachment.width
        height = attachment.height
    }

    var attachment: Post.Attachment? {
        URL(string: url).map { Post.Attachment(kind: kind, url: $0, previewURL: preview_url.flatMap(URL.init(string:)),
                                               description: description, title: title, mimeType: mime_type,
                                               sizeBytes: size_bytes, width: width, height: height) }
    }
}

func milliseconds(_ date: Date) -> Int64 {
    let value = (date.timeIntervalSince1970 * 1000).rounded()
    guard value.isFinite else { return value > 0 ? .max : .min }
    return Int64(exactly: value) ?? (value > 0 ? .max : .min)
}

extension Date {
    init(pgMilliseconds text: String?) { self.init(timeIntervalSince1970: Double(Int64(text ?? "") ?? 0) / 1000) }
}

/// Compact JSON with sorted keys, as the SQLite store writes it.
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

func decodeJSON<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
    guard let text else { return nil }
    return try? JSONDecoder().decode(type, from: Data(text.utf8))
}
