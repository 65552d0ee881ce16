import Core
import Foundation

/// A file a served item carries: each of a post's attachments and each of its videos (their
/// stream), as the enclosures Atom (`rel="enclosure"`), JSON Feed (`attachments`) and the
/// Google Reader API (`enclosure`) list.
struct Enclosure: Equatable {
    var url: String
    /// The media type, when the backend said one or the video's file name shows it.
    var type: String?
    var length: Int64?

    /// The enclosures of a post: its attachments in order, then its videos'. Link cards are
    /// not files and are left out.
    static func of(_ stored: StoredPost) -> [Enclosure] {
        let files = stored.post.attachments.filter { $0.kind != "link" }.map { attachment in
            Enclosure(url: attachment.link.absoluteString, type: mediaType(attachment.mimeType), length: attachment.sizeBytes)
        }
        let videos = stored.videos.map { video in
            Enclosure(url: video.stream.absoluteString, type: videoType(of: video.streamURL), length: video.sizeBytes)
        }
        return files + videos
    }

    /// A media type as given, when it has the shape `type/subtype` and no spaces.
    static func mediaType(_ given: String?) -> String? {
        guard let given, given.utf8.count <= 127, case let parts = given.split(separator: "/", omittingEmptySubsequences: false),
              parts.count == 2, parts.allSatisfy({ !$0.isEmpty && !$0.contains(where: { $0.isWhitespace || $0 == ";" }) }) else { return nil }
        return given
    }

    /// A video stream's media type from its file's extension, when it is a known one.
    static func videoType(of url: URL) -> String? {
        switch url.pathExtension.lowercased() {
        case "mp4", "m4v": "video/mp4"
        case "webm": "video/webm"
        case "ogv": "video/ogg"
        case "mov": "video/quicktime"
        case "m3u8": "application/vnd.apple.mpegurl"
        case "mpd": "application/dash+xml"
        default: nil
        }
    }
}

/// Who shared a post, said the same way in every served form.
enum Boost {
    /// "Boosted by NAME (@handle)" for a repost; `nil` for a post of the feed's own.
    static func line(_ post: Post) -> String? {
        post.repost.map { "Boosted by \(AtomDocument.name($0.by))" }
    }

    /// A post's text as HTML safe to render: the boost line first, as a paragraph of its own.
    static func html(_ post: Post) -> String {
        let text = GReaderJSON.escaped(post.text)
        guard let line = line(post) else { return text }
        return "<p>\(GReaderJSON.escaped(line))</p>" + text
    }
}
