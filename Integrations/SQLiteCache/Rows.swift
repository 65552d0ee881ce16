import Core
import Foundation

/// A `posts` row: the post's own columns, times in milliseconds since 1970 (UTC).
struct PostRow {
    var id: String
    var authorID: String
    var text: String
    var createdAt: Int64
    var editedAt: Int64?
    var replyTo: String?
    var replyCount: Int64
    var repostCount: Int64
    var likeCount: Int64
    /// The post's video ids as a JSON array, so other tools can use `json_each`.
    var videoIDs: String
    var html: String?
    var contentWarning: String?
    var language: String?
    var visibility: String?
    var repostBy: String?
    var repostOf: String?
    /// The non-video attachments as a JSON array of objects.
    var attachments: String
    var title: String?
    var url: String?
    var quoteOf: String?
    var quoteCount: Int64 = 0
    /// The moderation labels as a JSON array of strings.
    var labels = "[]"
    var repostAt: Int64?
}

/// A `users` row.
struct UserRow {
    var id: String
    var handle: String
    var displayName: String
    var avatarURL: String?
}

/// A resolved `videos` row.
struct VideoRow {
    var id: String
    var title: String
    var durationMs: Int64
    var streamURL: String
    var thumbnailURL: String?
    var sizeBytes: Int64?
    var width: Int64?
    var height: Int64?
    var fps: Double?

    init(_ video: Video) {
        id = video.id.rawValue
        title = video.title
        // Integrations bound durations, but no value from outside may trap the conversion.
        durationMs = Int64(exactly: (video.duration * 1000).rounded()) ?? 0
        streamURL = video.streamURL.absoluteString
        thumbnailURL = video.thumbnailURL?.absoluteString
        sizeBytes = video.sizeBytes
        width = video.width.map(Int64.init)
        height = video.height.map(Int64.init)
        fps = video.framesPerSecond
    }

    init(id: String, title: String, durationMs: Int64, streamURL: String, thumbnailURL: String?, sizeBytes: Int64?,
         width: Int64? = nil, height: Int64? = nil, fps: Double? = nil) {
        self.width = width
        self.height = height
        self.fps = fps
        self.id = id
        self.title = title
        self.durationMs = durationMs
        self.streamURL = streamURL
        self.thumbnailURL = thumbnailURL
        self.sizeBytes = sizeBytes
    }
}

extension User {
    init(_ row: UserRow) {
        self.init(id: UserID(row.id), handle: row.handle, displayName: row.displayName,
                  avatarURL: row.avatarURL.flatMap(URL.init(string:)))
    }
}

extension Post {
    init(_ row: PostRow, author: User, repostedBy: User?) {
        self.init(id: PostID(row.id), author: author, text: row.text, createdAt: Date(milliseconds: row.createdAt),
                  editedAt: row.editedAt.map(Date.init(milliseconds:)), replyTo: row.replyTo.map { PostID($0) },
                  counts: Counts(replies: Int(row.replyCount), reposts: Int(row.repostCount), likes: Int(row.likeCount),
                                 quotes: Int(row.quoteCount)),
                  videoIDs: JSONStringArray.decode(row.videoIDs).map { VideoID($0) }, html: row.html,
                  contentWarning: row.contentWarning, language: row.language,
                  visibility: row.visibility.flatMap(Visibility.init(rawValue:)),
                  repost: zip(repostedBy, row.repostOf).map { Repost(by: $0, originalID: PostID($1), at: row.repostAt.map(Date.init(milliseconds:))) },
                  attachments: AttachmentRow.decode(row.attachments), title: row.title, url: row.url.flatMap(URL.init(string:)),
                  quoteOf: row.quoteOf.map { PostID($0) }, labels: JSONStringArray.decode(row.labels))
    }
}

/// Pairs two optionals: both or nothing.
private func zip<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}

/// An attachment as stored in `posts.attachments` (a JSON array of these).
struct AttachmentRow: Codable {
    var kind: String
    var url: String
    var preview_url: String?
    var description: String?
    var title: String?
    var mime_type: String?
    var size_bytes: Int64?
    var width: Int?
    var height: Int?

    /// The attachments as a JSON array, byte for byte what `JSONEncoder` with `.sortedKeys` and
    /// `.withoutEscapingSlashes` makes of `[AttachmentRow]` (absent values left out), so rows
    /// written before compare equal; written by hand because `JSONEncoder` cost more than the
    /// rest of a Bluesky post's row (`perf record`, Benchmarks/README.md).
    static func encode(_ attachments: [Post.Attachment]) -> String {
        guard !attachments.isEmpty else { return "[]" }
        var json: [UInt8] = []
        json.reserveCapacity(attachments.count * 160)
        json.append(UInt8(ascii: "["))
        for (index, attachment) in attachments.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            var first = true
            func key(_ name: StaticString) {
                json.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
                first = false
                json.append(UInt8(ascii: "\""))
                json.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
                json.append(contentsOf: "\":".utf8)
            }
            func string(_ name: StaticString, _ value: String?) {
                guard let value else { return }
                key(name)
                appendJSONString(value, to: &json)
            }
            func number(_ name: StaticString, _ value: (some BinaryInteger)?) {
                guard let value else { return }
                key(name)
                json.append(contentsOf: String(value).utf8)
            }
            // In sorted key order.
            string("description", attachment.description)
            number("height", attachment.height)
            string("kind", attachment.kind)
            string("mime_type", attachment.mimeType)
            string("preview_url", attachment.previewURL?.absoluteString)
            number("size_bytes", attachment.sizeBytes)
            string("title", attachment.title)
            string("url", attachment.url.absoluteString)
            number("width", attachment.width)
            json.append(UInt8(ascii: "}"))
        }
        json.append(UInt8(ascii: "]"))
        return String(decoding: json, as: UTF8.self)
    }

    /// Appends `text` as a JSON string, escaped as `JSONEncoder` escapes it without slashes.
    private static func appendJSONString(_ text: String, to json: inout [UInt8]) {
        json.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): json.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): json.append(contentsOf: "\\\\".utf8)
            case 0x08: json.append(contentsOf: "\\b".utf8)
            case 0x0C: json.append(contentsOf: "\\f".utf8)
            case UInt8(ascii: "\n"): json.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\r"): json.append(contentsOf: "\\r".utf8)
            case UInt8(ascii: "\t"): json.append(contentsOf: "\\t".utf8)
            case 0x00 ..< 0x20:
                let hex = Array("0123456789abcdef".utf8)
                json.append(contentsOf: "\\u00".utf8)
                json.append(hex[Int(byte >> 4)])
                json.append(hex[Int(byte & 0x0F)])
            default: json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }

    static func decode(_ json: String) -> [Post.Attachment] {
        guard json != "[]", let rows = try? JSONDecoder().decode([AttachmentRow].self, from: Data(json.utf8)) else { return [] }
        return rows.compactMap { row in
            URL(string: row.url).map { Post.Attachment(kind: row.kind, url: $0, previewURL: row.preview_url.flatMap(URL.init(string:)),
                                                      description: row.description, title: row.title, mimeType: row.mime_type,
                                                      sizeBytes: row.size_bytes, width: row.width, height: row.height) }
        }
    }
}

extension Video {
    /// Fails for a row whose stream URL no longer parses (written by another tool, say).
    init?(_ row: VideoRow) {
        guard let stream = URL(string: row.streamURL) else { return nil }
        self.init(id: VideoID(row.id), title: row.title, duration: Double(row.durationMs) / 1000, streamURL: stream,
                  thumbnailURL: row.thumbnailURL.flatMap(URL.init(string:)), sizeBytes: row.sizeBytes,
                  width: row.width.map { Int($0) }, height: row.height.map { Int($0) }, framesPerSecond: row.fps)
    }
}

/// Times are stored as whole milliseconds since 1970 so that equal times compare equal in SQL.
/// A time beyond what 64 bits of milliseconds hold (no real one is) is clamped, never trapped on.
func millisecondsSince1970(_ date: Date) -> Int64 {
    let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
    guard milliseconds.isFinite else { return milliseconds > 0 ? .max : .min }
    return Int64(exactly: milliseconds) ?? (milliseconds > 0 ? .max : .min)
}

extension Date {
    init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

/// The JSON array of strings kept in `posts.video_ids`.
enum JSONStringArray {
    static func encode(_ strings: [String]) -> String {
        var json = "["
        for (index, string) in strings.enumerated() {
            if index > 0 { json += "," }
            json += "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": json += "\\\""
                case "\\": json += "\\\\"
                case _ where scalar.value < 0x20: json += String(format: "\\u%04x", scalar.value)
                default: json.unicodeScalars.append(scalar)
                }
            }
            json += "\""
        }
        return json + "]"
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

    static func decode(_ json: String) -> [String] {
        // Most posts have no videos or labels; JSONDecoder costs microseconds even for `[]`.
        guard json != "[]" else { return [] }
        // What `encode` writes for strings with nothing to escape, read without JSONDecoder (an
        // export reads a million of these): `["a","b"]` with no `\` splits at `","`. Anything
        // else, another tool's spacing included, goes through the decoder.
        if let strings = plainStrings(json) { return strings }
        return (try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []
    }
}
