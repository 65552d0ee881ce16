import Core
import Foundation

/// A post's non-video attachments as `posts.attachments` holds them: a JSON array of objects
/// with snake_case keys in sorted order, absent values left out.
///
/// To add a field to ``Post/Attachment``: add it to ``Fields`` (a property, its key, a line in
/// each of the two mappings) and one line in ``Fields/write(to:)`` at its place in key order. The test
/// `StoreKitTests.attachmentJSONMatchesJSONEncoder` compares the hand-written form with
/// `JSONEncoder`'s for a fully populated attachment, so a field left out of `write` fails it.
public enum AttachmentsJSON {
    /// The JSON form of one attachment; `Codable` for reading (and for the test's `JSONEncoder`).
    struct Fields: Codable, Equatable {
        var kind: String
        var url: String
        var previewURL: String?
        var description: String?
        var title: String?
        var mimeType: String?
        var sizeBytes: Int64?
        var width: Int?
        var height: Int?
        /// The length in whole milliseconds, as `videos.duration_ms` keeps a video's.
        var durationMs: Int64?
        var episode: Int?
        var season: Int?

        /// The keys as the column spells them.
        private enum CodingKeys: String, CodingKey {
            case kind, url, previewURL = "preview_url", description, title, mimeType = "mime_type", sizeBytes = "size_bytes",
                 width, height, durationMs = "duration_ms", episode, season
        }

        init(_ attachment: Post.Attachment) {
            kind = attachment.kind
            url = attachment.link.absoluteString
            previewURL = attachment.previewLink?.absoluteString
            description = attachment.description
            title = attachment.title
            mimeType = attachment.mimeType
            sizeBytes = attachment.sizeBytes
            width = attachment.width
            height = attachment.height
            // Integrations bound durations, but no value from outside may trap the conversion.
            durationMs = attachment.duration.flatMap { Int64(exactly: ($0 * 1000).rounded()) }
            episode = attachment.episode
            season = attachment.season
        }

        /// `nil` for an attachment whose URL no longer parses (written by another tool, say).
        var attachment: Post.Attachment? {
            URL(string: url).map { Post.Attachment(kind: kind, url: $0, previewURL: previewURL.flatMap(URL.init(string:)),
                                                   description: description, title: title, mimeType: mimeType,
                                                   sizeBytes: sizeBytes, width: width, height: height,
                                                   duration: durationMs.map { Double($0) / 1000 }, episode: episode, season: season) }
        }

        /// Writes the object, its keys in sorted order.
        func write(to json: inout JSONWriter) {
            json.openObject()
            json.string("description", description)
            json.int("duration_ms", durationMs)
            json.int("episode", episode)
            json.int("height", height)
            json.string("kind", kind)
            json.string("mime_type", mimeType)
            json.string("preview_url", previewURL)
            json.int("season", season)
            json.int("size_bytes", sizeBytes)
            json.string("title", title)
            json.string("url", url)
            json.int("width", width)
            json.closeObject()
        }
    }

    public static func encode(_ attachments: [Post.Attachment], dialect: SQLDialect) -> String {
        guard !attachments.isEmpty else { return "[]" }
        var json = JSONWriter(escaping: dialect.jsonEscaping, reserving: attachments.count * 160)
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
