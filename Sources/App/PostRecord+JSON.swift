import Core
import Foundation

/// The one JSON form of a record: what `export` writes a line of and what `posts --json` and
/// `search --json` print indented.
extension PostRecord {
    /// Writes the record as one object: its members in sorted key order, a `nil` member left
    /// out, dates as ``ISO8601Timestamp`` writes them (the shape `JSONEncoder` gave the record
    /// when it was `Encodable`).
    ///
    ///     var json = JSONWriter(escaping: .terminalControls)
    ///     record.write(to: &json)
    ///     json.newline()                       // one line of `export`'s JSON Lines
    public func write(to json: inout JSONWriter) {
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
        Self.write(author, to: &json)
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
        json.bool("read", read)
        json.string("replyTo", replyTo)
        if let repost {
            json.key("repost")
            json.openObject()
            json.date("at", repost.at)
            json.key("by")
            Self.write(repost.by, to: &json)
            json.string("originalID", repost.originalID)
            json.closeObject()
        }
        json.bool("starred", starred)
        json.string("text", text)
        json.string("title", title)
        json.string("url", url?.absoluteString)
        json.strings("videoIDs", videoIDs)
        json.key("videos")
        json.openArray()
        for video in videos { Self.write(video, to: &json) }
        json.closeArray()
        json.string("visibility", visibility)
        json.closeObject()
    }

    /// Writes a resolved video as one object, in sorted key order.
    static func write(_ video: VideoRow, to json: inout JSONWriter) {
        json.openObject()
        json.string("author", video.author)
        json.double("durationSeconds", video.durationSeconds)
        json.double("framesPerSecond", video.framesPerSecond)
        json.int("height", video.height)
        json.string("id", video.id)
        json.int("likeCount", video.likeCount)
        json.double("rating", video.rating)
        json.int("sizeBytes", video.sizeBytes)
        json.string("streamURL", video.streamURL.absoluteString)
        json.string("thumbnailURL", video.thumbnailURL?.absoluteString)
        json.string("title", video.title)
        json.int("viewCount", video.viewCount)
        json.int("width", video.width)
        json.closeObject()
    }

    static func write(_ author: Author, to json: inout JSONWriter) {
        json.openObject()
        json.string("avatarURL", author.avatarURL?.absoluteString)
        json.string("displayName", author.displayName)
        json.string("handle", author.handle)
        json.string("id", author.id)
        json.closeObject()
    }
}
