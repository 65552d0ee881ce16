import Core
import Foundation
import IntegrationKit

/// Maps a parsed feed to Core posts, users and videos.
enum WebFeedMapping {
    /// What one document becomes: posts oldest first, the videos they carry, the items dropped,
    /// and the first-seen times to remember for items without a date.
    struct Mapped {
        var posts: [Post] = []
        var videos: [Video] = []
        var skipped: [SkippedItem] = []
        var firstSeen: [String: Int64] = [:]
    }

    static func changes(_ document: WebFeedDocument, firstSeen known: [String: Int64], now: Date) -> Mapped {
        var mapped = Mapped()
        var seen = Set<String>()
        var dated: [(post: Post, order: Int)] = []
        var videos: [VideoID: Video] = [:]
        let feedAuthor = user(for: document.authors.first, document: document)
        for (order, entry) in document.entries.enumerated() {
            let id = identity(of: entry)
            guard seen.insert(id).inserted else {
                mapped.skipped.append(SkippedItem(id: Terminal.safe(id, limit: 120), reason: "the feed lists this item twice; the first is kept",
                                                  postID: PostID(id)))
                continue
            }
            var createdAt = entry.published ?? entry.updated
            if createdAt == nil {
                let first = known[id] ?? Int64((now.timeIntervalSince1970 * 1000).rounded())
                if mapped.firstSeen.count < WebFeedCursor.maxFirstSeen { mapped.firstSeen[id] = first }
                createdAt = Date(timeIntervalSince1970: TimeInterval(first) / 1000)
            }
            let author = entry.authors.first.map { user(for: $0, document: document) } ?? feedAuthor
            var post = Post(entry, id: PostID(id), author: author, createdAt: createdAt!)
            for enclosure in entry.enclosures {
                if enclosure.type?.lowercased().hasPrefix("video/") == true {
                    let video = Video(id: VideoID(enclosure.url.absoluteString), title: enclosure.title ?? entry.title ?? "",
                                      duration: 0, streamURL: enclosure.url, sizeBytes: enclosure.length)
                    post.videoIDs.append(video.id)
                    videos[video.id] = video
                } else {
                    post.attachments.append(Post.Attachment(kind: kind(of: enclosure.type), url: enclosure.url, title: enclosure.title,
                                                            mimeType: enclosure.type, sizeBytes: enclosure.length))
                }
            }
            dated.append((post, order))
        }
        // The parser reads no more than its limit of entries: the rest are listed but unread, so
        // a walk over this document must not sweep (a skipped item without an id says so).
        if document.entries.count >= XMLFeedParser.maxEntries {
            mapped.skipped.append(SkippedItem(id: nil, reason: "the feed lists \(XMLFeedParser.maxEntries) items or more, as many as are read; any after them are not"))
        }
        // Oldest first, as a page wants; among equal times, the feed's later item is the older.
        dated.sort { $0.post.createdAt != $1.post.createdAt ? $0.post.createdAt < $1.post.createdAt : $0.order > $1.order }
        mapped.posts = dated.map(\.post)
        var listed = Set<VideoID>()
        mapped.videos = mapped.posts.flatMap(\.videoIDs).filter { listed.insert($0).inserted }.compactMap { videos[$0] }
        return mapped
    }

    /// The item's identity: its `guid`/`id`, else its link, else a hash of what it says. The
    /// hash reads the title and the text rendering of the content with whitespace collapsed, so
    /// re-rendering the same item (other entities, CDATA, line breaks) keeps its id.
    static func identity(of entry: WebFeedEntry) -> String {
        if let id = entry.id { return id.utf8.count <= 512 ? id : "id-sha256:" + SHA256.hex(Data(id.utf8)) }
        if let link = entry.link { return link.absoluteString.utf8.count <= 512 ? link.absoluteString : "link-sha256:" + SHA256.hex(Data(link.absoluteString.utf8)) }
        let text = entry.html.map(HTMLText.plainText) ?? entry.plainText ?? ""
        let normalized = [entry.title ?? "", text].map { $0.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ") }
        return "sha256:" + SHA256.hex(Data(normalized.joined(separator: "\n").utf8))
    }

    /// `audio`, `image`, or `unknown` for an enclosure's media type.
    static func kind(of type: String?) -> String {
        let type = type?.lowercased() ?? ""
        if type.hasPrefix("audio/") { return "audio" }
        if type.hasPrefix("image/") { return "image" }
        return "unknown"
    }

    /// An author as a user of the feed; the feed itself stands in when nobody is named.
    static func user(for author: WebFeedAuthor?, document: WebFeedDocument) -> User {
        guard let author else {
            let name = document.title ?? document.link?.host ?? "feed"
            return User(id: "feed", handle: document.link?.host ?? "feed", displayName: name)
        }
        let id = author.email ?? author.uri?.absoluteString ?? author.name ?? "feed"
        return User(id: UserID(id), handle: author.email ?? author.name ?? author.uri?.host ?? id,
                    displayName: author.name ?? author.email ?? author.uri?.host ?? id)
    }
}

extension Post {
    /// A feed item as a post: title, permalink, HTML with its plain-text rendering.
    init(_ entry: WebFeedEntry, id: PostID, author: User, createdAt: Date) {
        let text = entry.html.map(HTMLText.plainText) ?? entry.plainText ?? ""
        var edited: Date?
        if let updated = entry.updated, let published = entry.published, updated.timeIntervalSince(published) >= 1 { edited = updated }
        self.init(id: id, author: author, text: text, createdAt: createdAt, editedAt: edited, html: entry.html,
                  language: entry.language, title: entry.title, url: entry.link, labels: [])
    }
}
