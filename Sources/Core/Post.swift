import Foundation

/// One post of a feed, in the app's own terms.
///
/// A post refers to its videos by id only; a ``VideoService`` resolves them, and a post is
/// kept even when its videos cannot be resolved.
public struct Post: Hashable, Sendable, Identifiable {
    /// How many replies, reposts and likes a post has, as the backend last reported.
    public struct Counts: Hashable, Sendable {
        public var replies: Int
        public var reposts: Int
        public var likes: Int
        /// How many posts quote this one (Bluesky); 0 where a backend does not count them.
        public var quotes: Int

        public init(replies: Int = 0, reposts: Int = 0, likes: Int = 0, quotes: Int = 0) {
            self.replies = replies
            self.reposts = reposts
            self.likes = likes
            self.quotes = quotes
        }
    }

    public var id: PostID
    public var author: User
    public var text: String
    public var createdAt: Date
    /// When the post was last edited; `nil` for a post never edited.
    public var editedAt: Date?
    /// The post this one answers, if any.
    public var replyTo: PostID?
    public var counts: Counts
    /// The videos attached to the post, in the order the backend lists them.
    public var videoIDs: [VideoID]
    /// The post's markup as the backend sent it, for backends that send HTML; `text` is then
    /// its plain-text rendering.
    public var html: String?
    /// A content warning shown before the text (Mastodon's spoiler text).
    public var contentWarning: String?
    /// The language of the text, as an ISO 639 code, when the backend says.
    public var language: String?
    public var visibility: Visibility?
    /// Set when this feed entry is someone sharing another's post: the post's content and
    /// author are the original's, and this names who shared it.
    public var repost: Repost?
    /// Attachments other than videos (images, audio, link cards…), in the backend's order.
    public var attachments: [Attachment]
    /// The post's title, for backends whose posts have one (a web feed's entries).
    public var title: String?
    /// Where the post can be read on the web (its permalink), when the backend says.
    public var link: WebLink?
    /// The post this one quotes, if any (a Bluesky quote post).
    public var quoteOf: PostID?
    /// Moderation labels the backend attached (`nsfw`, `spam`…), as it names them.
    public var labels: [String]

    /// Who may see a post.
    public enum Visibility: String, Hashable, Sendable {
        case `public`, unlisted, followersOnly = "followers", direct
    }

    /// The sharing of another's post.
    public struct Repost: Hashable, Sendable {
        /// Who shared it.
        public var by: User
        /// The original post's id.
        public var originalID: PostID
        /// When it was shared, when the backend says (the post's own time is the original's).
        public var at: Date?

        public init(by: User, originalID: PostID, at: Date? = nil) {
            self.by = by
            self.originalID = originalID
            self.at = at
        }
    }

    /// A file or link attached to a post that is not a video.
    public struct Attachment: Hashable, Sendable {
        /// What it is, as the backend names it: `image`, `audio`, `link`, `unknown`.
        public var kind: String
        public var link: WebLink
        public var previewLink: WebLink?
        /// The alternative text, or a link card's description.
        public var description: String?
        /// A link card's title.
        public var title: String?
        /// The media type, as the backend says (`audio/mpeg`).
        public var mimeType: String?
        /// The size in bytes, as the backend says.
        public var sizeBytes: Int64?
        /// The size in pixels, for images.
        public var width: Int?
        public var height: Int?
        /// Its length in seconds, for audio and video (a podcast's `itunes:duration`).
        public var duration: TimeInterval?
        /// A podcast episode's number and season (`itunes:episode`, `itunes:season`).
        public var episode: Int?
        public var season: Int?

        public init(kind: String, url: URL, previewURL: URL? = nil, description: String? = nil, title: String? = nil,
                    mimeType: String? = nil, sizeBytes: Int64? = nil, width: Int? = nil, height: Int? = nil,
                    duration: TimeInterval? = nil, episode: Int? = nil, season: Int? = nil) {
            self.init(kind: kind, link: WebLink(url), previewLink: previewURL.map(WebLink.init), description: description,
                      title: title, mimeType: mimeType, sizeBytes: sizeBytes, width: width, height: height, duration: duration,
                      episode: episode, season: season)
        }

        /// As the initializer above, with the links as text (``WebLink``): what a mapping makes
        /// from a backend's answer without a `URL` parse.
        public init(kind: String, link: WebLink, previewLink: WebLink? = nil, description: String? = nil, title: String? = nil,
                    mimeType: String? = nil, sizeBytes: Int64? = nil, width: Int? = nil, height: Int? = nil,
                    duration: TimeInterval? = nil, episode: Int? = nil, season: Int? = nil) {
            self.kind = kind
            self.link = link
            self.previewLink = previewLink
            self.description = description
            self.title = title
            self.mimeType = mimeType
            self.sizeBytes = sizeBytes
            self.width = width
            self.height = height
            self.duration = duration
            self.episode = episode
            self.season = season
        }
    }

    public init(
        id: PostID, author: User, text: String, createdAt: Date, editedAt: Date? = nil,
        replyTo: PostID? = nil, counts: Counts = Counts(), videoIDs: [VideoID] = [], html: String? = nil,
        contentWarning: String? = nil, language: String? = nil, visibility: Visibility? = nil,
        repost: Repost? = nil, attachments: [Attachment] = [], title: String? = nil, url: URL? = nil,
        quoteOf: PostID? = nil, labels: [String] = []
    ) {
        self.id = id
        self.author = author
        self.text = text
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.replyTo = replyTo
        self.counts = counts
        self.videoIDs = videoIDs
        self.html = html
        self.contentWarning = contentWarning
        self.language = language
        self.visibility = visibility
        self.repost = repost
        self.attachments = attachments
        self.title = title
        self.link = url.map(WebLink.init)
        self.quoteOf = quoteOf
        self.labels = labels
    }
}

extension Post {
    /// ``link`` as a Foundation `URL`, parsed when read.
    public var url: URL? {
        get { link?.url }
        set { link = newValue.map(WebLink.init) }
    }
}

extension Post.Attachment {
    /// ``link`` as a Foundation `URL`, parsed when read.
    public var url: URL {
        get { link.url }
        set { link = WebLink(newValue) }
    }

    /// ``previewLink`` as a Foundation `URL`, parsed when read.
    public var previewURL: URL? {
        get { previewLink?.url }
        set { previewLink = newValue.map(WebLink.init) }
    }
}
