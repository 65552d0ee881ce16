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
