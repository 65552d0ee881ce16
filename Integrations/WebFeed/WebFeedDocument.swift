import Foundation

/// A web feed as its document says it, whatever the format: the wire shape every parser
/// produces and the mapping to Core reads. Nothing here is trusted yet: URLs are absolute
/// http(s) or absent, and every string is bounded, but ids may repeat and dates may be missing.
struct WebFeedDocument: Sendable, Equatable {
    /// Which format the content turned out to be (detected from the content, never the URL).
    enum Format: String, Sendable {
        case rss2 = "rss"
        case rss1 = "rdf"
        case atom
        case jsonFeed = "json"
    }

    var format: Format
    var title: String?
    /// The site the feed belongs to.
    var link: URL?
    /// Authors named for the whole feed: items without their own inherit them.
    var authors: [WebFeedAuthor] = []
    var entries: [WebFeedEntry] = []
    /// The podcast's artwork (`itunes:image` on the channel), which episodes without their own take.
    var podcastImage: URL?
    /// What reading it took that an operator may want to know, one sentence each: a fallback
    /// encoding, a recovery from XML that is not well-formed.
    var notes: [String] = []
}

/// One item (RSS), entry (Atom) or item (JSON Feed).
struct WebFeedEntry: Sendable, Equatable {
    /// `guid`, Atom `id`, JSON Feed `id`, or RSS 1.0's `rdf:about`; `nil` when the item has none.
    var id: String?
    var title: String?
    /// The permalink: `link`, Atom `link rel="alternate"`, JSON Feed `url`.
    var link: URL?
    /// The markup of the fullest content the item has (`content:encoded`, Atom `content`,
    /// `content_html`), or of its summary when that is all.
    var html: String?
    /// Plain-text content the item sent as such (Atom `type="text"`, `content_text`).
    var plainText: String?
    var published: Date?
    var updated: Date?
    var authors: [WebFeedAuthor] = []
    var enclosures: [WebFeedEnclosure] = []
    /// The item's language, when it or the feed says.
    var language: String?
    /// Category terms, in order.
    var categories: [String] = []
    /// Media RSS (`media:content`, `media:thumbnail`, `media:group`…), YouTube's included.
    var media = WebFeedMedia()
    /// YouTube's `yt:videoId`: the entry is that video.
    var youTubeVideoID: String?
    /// The iTunes podcast namespace's episode fields.
    var episode = WebFeedEpisode()
}

/// What Media RSS (www.rssboard.org/media-rss) says of an item, wherever in it (`media:group` too).
struct WebFeedMedia: Sendable, Equatable {
    var contents: [WebFeedMediaContent] = []
    var thumbnail: URL?
    var title: String?
    var description: String?
    /// `media:community`'s `media:statistics views` and `media:starRating count`/`average`.
    var views: Int64?
    var ratings: Int64?
    var averageRating: Double?
}

/// One `media:content`.
struct WebFeedMediaContent: Sendable, Equatable {
    var url: URL
    var type: String?
    /// `image`, `audio`, `video`, `document` or `executable`.
    var medium: String?
    var duration: Double?
    var fileSize: Int64?
    var width: Int?
    var height: Int?
}

/// `itunes:duration`, `itunes:episode`, `itunes:season` and `itunes:image` of an episode.
struct WebFeedEpisode: Sendable, Equatable {
    var duration: Double?
    var number: Int?
    var season: Int?
    var image: URL?
    var summary: String?
    var author: String?
}

/// A person named as an author.
struct WebFeedAuthor: Sendable, Hashable {
    var name: String?
    var email: String?
    var uri: URL?
}

/// A file the item carries: RSS `enclosure`, Atom `link rel="enclosure"`, JSON Feed `attachments`.
struct WebFeedEnclosure: Sendable, Equatable {
    var url: URL
    var type: String?
    var length: Int64?
    var title: String?
}

/// Why a document is not a feed, with where in it, when the parser knows.
struct WebFeedParseError: Error, Equatable, CustomStringConvertible {
    var reason: String
    var line: Int?
    var column: Int?
    /// Whether the document is not well-formed (which recovery may mend), rather than refused.
    var isWellFormedness = false

    var description: String {
        guard let line else { return reason }
        return "line \(line)\(column.map { ", column \($0)" } ?? ""): \(reason)"
    }
}
