import Core
import IntegrationKit

/// The Google Reader API's JSON objects, written from Core's models (the API's own names).
enum GReaderJSON {
    /// The stream id of a feed: `feed/NAME`.
    static func streamID(of feed: String) -> String { "feed/" + feed }

    /// One entry of `subscription/list`: the feed, its group as its one category.
    static func subscription(_ feed: ServedFeed, to json: inout JSONWriter) {
        json.openObject()
        json.string("id", streamID(of: feed.name))
        json.string("title", feed.name)
        json.key("categories")
        json.openArray()
        if let group = feed.group {
            json.openObject()
            json.string("id", "user/-/label/\(group)")
            json.string("label", group)
            json.closeObject()
        }
        json.closeArray()
        json.string("url", streamID(of: feed.name))
        json.string("htmlUrl", "")
        json.string("iconUrl", "")
        json.closeObject()
    }

    /// One entry of `tag/list`.
    static func tag(_ id: String, type: String?, to json: inout JSONWriter) {
        json.openObject()
        json.string("id", id)
        json.string("type", type)
        json.closeObject()
    }
}

extension GReaderJSON {
    /// One item of `stream/contents` and `stream/items/contents`: the post, its author (for a
    /// repost the original's; its sharer said in the title and first in the content), its
    /// attachments and videos as `enclosure`s, its marks as categories, its feed as origin.
    /// `id` is its item id when the caller has it already (a hash a post saved).
    static func item(_ stored: StoredPost, id given: ItemID? = nil, group: String?, to json: inout JSONWriter) {
        let post = stored.post
        let id = given ?? ItemID(feed: stored.feed, post: post.id)
        let milliseconds = Int64((post.createdAt.timeIntervalSince1970 * 1000).rounded())
        json.openObject()
        json.string("id", id.long)
        json.string("crawlTimeMsec", String(milliseconds))
        json.string("timestampUsec", String(milliseconds * 1000))
        json.int("published", milliseconds / 1000)
        json.int("updated", Int64(((post.editedAt ?? post.createdAt).timeIntervalSince1970).rounded(.down)))
        json.string("title", title(of: stored))
        json.key("summary")
        json.openObject()
        json.string("direction", "ltr")
        // The plain text feedsync keeps, escaped: a server's own markup is never passed on.
        json.string("content", Boost.html(post))
        json.closeObject()
        let enclosures = Enclosure.of(stored)
        if !enclosures.isEmpty {
            json.key("enclosure")
            json.openArray()
            for enclosure in enclosures {
                json.openObject()
                json.string("href", enclosure.url)
                json.string("type", enclosure.type)
                json.string("length", enclosure.length.map(String.init))
                json.closeObject()
            }
            json.closeArray()
        }
        if let url = post.link?.absoluteString {
            for key: StaticString in ["canonical", "alternate"] {
                json.key(key)
                json.openArray()
                json.openObject()
                json.string("href", url)
                json.string("type", "text/html")
                json.closeObject()
                json.closeArray()
            }
        }
        json.key("categories")
        json.openArray()
        json.string(StreamRequest.reading)
        if let group { json.string("user/-/label/\(group)") }
        if stored.isRead { json.string(StreamRequest.read) }
        if stored.isStarred { json.string(StreamRequest.starred) }
        json.closeArray()
        json.key("origin")
        json.openObject()
        json.string("streamId", streamID(of: stored.feed))
        json.string("title", stored.feed)
        json.closeObject()
        json.string("author", post.author.displayName.isEmpty ? post.author.handle : post.author.displayName)
        json.closeObject()
    }

    /// A title for apps that show one: the post's own, else its first line (a boost says so).
    static func title(of stored: StoredPost) -> String {
        let post = stored.post
        let base = post.title ?? String(post.text.split(separator: "\n").first?.prefix(120) ?? "")
        guard let repost = post.repost else { return base }
        return "\(repost.by.displayName.isEmpty ? repost.by.handle : repost.by.displayName) boosted \(post.author.handle): \(base)"
    }

    /// Plain text as HTML that shows it as it is.
    static func escaped(_ text: String) -> String {
        HTMLText.escape(text).replacingOccurrences(of: "\n", with: "<br>")
    }
}
