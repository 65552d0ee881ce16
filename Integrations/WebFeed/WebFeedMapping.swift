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
            let author = (entry.authors.first ?? entry.episode.author.map { WebFeedAuthor(name: $0) }).map { user(for: $0, document: document) }
                ?? feedAuthor
            var post = Post(entry, id: PostID(id), author: author, createdAt: createdAt!)
            // A YouTube entry's or an episode's text is its media or iTunes description.
            if entry.html == nil && entry.plainText == nil, let text = entry.media.description ?? entry.episode.summary { post.text = text }
            for video in media(of: entry, document: document, into: &post) where videos[video.id] == nil { videos[video.id] = video }
            // An entry linking a PeerTube watch URL carries that video, for the PeerTube video host to resolve.
            if let link = post.url, PeerTubeWatchLink.parse(link) != nil, !post.videoIDs.contains(VideoID(link.absoluteString)) {
                post.videoIDs.append(VideoID(link.absoluteString))
            }
            // An entry linking a YouTube video (not YouTube's own feed, whose entries carry theirs) carries it, for oEmbed.
            if let link = post.url, let id = YouTubeWatchLink.videoID(in: link), !post.videoIDs.contains(VideoID("youtube:\(id)")) {
                post.videoIDs.append(VideoID("youtube:\(id)"))
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

    /// The videos and attachments an entry carries, from its enclosures, Media RSS and
    /// YouTube's `yt:videoId`, with podcast episode fields on its audio; `post` gets their ids
    /// and the attachments.
    ///
    /// - A YouTube entry is one video, `youtube:<videoId>`, streamed at its watch URL, with the
    ///   `media:group`'s title, thumbnail, `media:content` duration and size, view count
    ///   (`media:statistics views`) and rating (`media:starRating average`); the rating's count
    ///   becomes the post's likes.
    /// - A `video/*` enclosure or `media:content` (type `video/*` or `medium="video"`) is a video
    ///   named by its URL; images, audio and other files are attachments; one URL counts once.
    /// - An audio attachment of a podcast (the iTunes namespace) has the episode's or the show's
    ///   image as its preview, and the episode's duration, number and season.
    static func media(of entry: WebFeedEntry, document: WebFeedDocument, into post: inout Post) -> [Video] {
        var videos: [Video] = []
        var seen = Set<URL>()
        let episodeImage = entry.episode.image ?? document.podcastImage
        let thumbnail = entry.media.thumbnail ?? episodeImage
        if let id = entry.youTubeVideoID {
            let watch = entry.link ?? URL(string: "https://www.youtube.com/watch?v=\(id)")!
            let content = entry.media.contents.first
            videos.append(Video(id: VideoID("youtube:\(id)"), title: entry.media.title ?? entry.title ?? "", duration: content?.duration ?? 0,
                                streamURL: watch, thumbnailURL: thumbnail, sizeBytes: content?.fileSize, width: content?.width, height: content?.height,
                                viewCount: entry.media.views.map { Int(clamping: $0) }, rating: entry.media.averageRating))
            if let ratings = entry.media.ratings { post.counts.likes = Int(clamping: ratings) }
            // Its media:content is YouTube's player, not a file: the video above stands for it.
            entry.media.contents.forEach { seen.insert($0.url) }
        }
        func add(url: URL, type: String?, medium: String?, title: String?, size: Int64?, duration: Double?, width: Int?, height: Int?) {
            guard seen.insert(url).inserted else { return }
            let type = type?.lowercased()
            let kind = medium == "video" ? "video" : medium == "audio" ? "audio" : medium == "image" ? "image" : Self.kind(of: type)
            if kind == "video" || type?.hasPrefix("video/") == true {
                videos.append(Video(id: VideoID(url.absoluteString), title: title ?? entry.title ?? "", duration: duration ?? entry.episode.duration ?? 0,
                                    streamURL: url, thumbnailURL: thumbnail, sizeBytes: size, width: width, height: height))
                return
            }
            var attachment = Post.Attachment(kind: kind, url: url, title: title, mimeType: type, sizeBytes: size, width: width, height: height,
                                             duration: duration)
            if kind == "audio" {
                attachment.previewURL = episodeImage
                attachment.duration = entry.episode.duration ?? duration
                attachment.episode = entry.episode.number
                attachment.season = entry.episode.season
            }
            post.attachments.append(attachment)
        }
        for enclosure in entry.enclosures {
            add(url: enclosure.url, type: enclosure.type, medium: nil, title: enclosure.title, size: enclosure.length, duration: nil, width: nil, height: nil)
        }
        for content in entry.media.contents {
            add(url: content.url, type: content.type, medium: content.medium, title: entry.media.title, size: content.fileSize,
                duration: content.duration, width: content.width, height: content.height)
        }
        // A thumbnail with nothing else to show it on is the item's image.
        if let image = entry.media.thumbnail, videos.isEmpty, !post.attachments.contains(where: { $0.kind == "image" }), seen.insert(image).inserted {
            post.attachments.append(Post.Attachment(kind: "image", url: image, description: entry.media.title))
        }
        post.videoIDs = videos.map(\.id)
        return videos
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
    /// A feed item as a post: title (else its `media:title`), permalink, HTML with its plain-text rendering.
    init(_ entry: WebFeedEntry, id: PostID, author: User, createdAt: Date) {
        let text = entry.html.map(HTMLText.plainText) ?? entry.plainText ?? ""
        var edited: Date?
        if let updated = entry.updated, let published = entry.published, updated.timeIntervalSince(published) >= 1 { edited = updated }
        self.init(id: id, author: author, text: text, createdAt: createdAt, editedAt: edited, html: entry.html,
                  language: entry.language, title: entry.title ?? entry.media.title, url: entry.link, labels: [])
    }
}
