import Core
import Foundation

/// A post's non-video attachments as `posts.attachments` holds them: a JSON array of objects
/// with snake_case keys in sorted order, absent values left out.
///
/// To add a field to ``Post/Attachment``: add it to ``Fields`` (a property, a line in each of
/// the two mappings) and one line in ``Fields/write(to:)`` at its place in key order. The test
/// `StoreKitTests.attachmentJSONMatchesJSONEncoder` compares the hand-written form with
/// `JSONEncoder`'s for a fully populated attachment, so a field left out of `write` fails it.
public enum AttachmentsJSON {
    /// The JSON form of one attachment; `Codable` for reading (and for the test's `JSONEncoder`).
    struct Fields: Codable, Equatable {
        var kind: String
        var url: String
        var preview_url: String?
        var description: String?
        var title: String?
        var mime_type: String?
        var size_bytes: Int64?
        var width: Int?
        var height: Int?
        /// The length in whole milliseconds, as `videos.duration_ms` keeps a video's.
        var duration_ms: Int64?
        var episode: Int?
        var season: Int?

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
            // Integrations bound durations, but no value from outside may trap the conversion.
            duration_ms = attachment.duration.flatMap { Int64(exactly: ($0 * 1000).rounded()) }
            episode = attachment.episode
            season = attachment.season
        }

        /// `nil` for an attachment whose URL no longer parses (written by another tool, say).
        var attachment: Post.Attachment? {
            URL(string: url).map { Post.Attachment(kind: kind, url: $0, previewURL: preview_url.flatMap(URL.init(string:)),
                                                   description: description, title: title, mimeType: mime_type,
                                                   sizeBytes: size_bytes, width: width, height: height,
                                                   duration: duration_ms.map { Double($0) / 1000 }, episode: episode, season: season) }
        }

        /// Writes the object, its keys in sorted order.
        func write(to json: inout JSONWriter) {
            json.openObject()
            json.string("description", description)
            json.int("duration_ms", duration_ms)
            json.int("episode", episode)
            json.int("height", height)
            json.string("kind", kind)
            json.string("mime_type", mime_type)
            json.string("preview_url", preview_url)
            json.int("season", season)
            json.int("size_bytes", size_bytes)
            json.string("title", title)
            json.string("url", url)
            json.int("width", width)
            json.closeObject()
        }
    }

    public static func encode(_ attachments: [Post.Attachment], dialect: JSONDialect) -> String {
        guard !attachments.isEmpty else { return "[]" }
        var json = JSONWriter(escaping: dialect.objectEscaping, reserving: attachments.count * 160)
        json.openArray()
        for attachment in attachments { Fields(attachment).write(to: &json) }
        json.closeArray()
        return json.text
    }

    /// The attachments of a stored array; those whose URL does not parse are left out, and
    /// anything that is not such an array reads as none.
    public static func decode(_ json: String) -> [Post.Attachment] {
        guard json != "[]", let rows = try? JSONDecoder().decode([Fields].self, from: Data(json.utf8)) else { return [] }
        return rows.compactMap(\.attachment)
    }
}
