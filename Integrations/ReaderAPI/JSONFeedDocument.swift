import Core
import Foundation

/// A page of a served feed as JSON Feed 1.1: the same posts as ``AtomDocument`` (a boost's sharer first in its content, attachments and videos as `attachments`), `next_url` to
/// the page after.
enum JSONFeedDocument {
    static func render(title: String, selfURL: String, nextURL: String?, posts: [StoredPost]) -> [UInt8] {
        var json = JSONWriter(escaping: [.controlsAsUnicode, .replacingNUL])
        json.openObject()
        json.string("version", "https://jsonfeed.org/version/1.1")
        json.string("title", title)
        json.string("feed_url", selfURL)
        json.string("next_url", nextURL)
        json.key("items")
        json.openArray()
        for stored in posts {
            let post = stored.post
            json.openObject()
            json.string("id", ItemID(feed: stored.feed, post: post.id).long)
            json.string("url", post.link?.absoluteString)
            json.string("title", GReaderJSON.title(of: stored))
            json.string("content_text", Boost.line(post).map { $0 + "\n\n" + post.text } ?? post.text)
            json.string("content_html", Boost.html(post))
            json.string("date_published", ISO8601Timestamp.string(from: post.createdAt))
            json.string("date_modified", post.editedAt.map(ISO8601Timestamp.string(from:)))
            json.key("authors")
            json.openArray()
            json.openObject()
            json.string("name", AtomDocument.name(post.author))
            json.closeObject()
            json.closeArray()
            let enclosures = Enclosure.of(stored)
            if !enclosures.isEmpty {
                json.key("attachments")
                json.openArray()
                for enclosure in enclosures {
                    json.openObject()
                    json.string("url", enclosure.url)
                    json.string("mime_type", enclosure.type ?? "application/octet-stream")
                    json.int("size_in_bytes", enclosure.length)
                    json.closeObject()
                }
                json.closeArray()
            }
            json.closeObject()
        }
        json.closeArray()
        json.closeObject()
        return json.bytes
    }
}
