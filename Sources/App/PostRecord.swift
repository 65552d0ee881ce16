import Core
import Foundation

/// A stored post as the command line prints it: `posts --json`, `search --json` and `export`
/// all use this one shape, with its author and resolved videos, written by
/// ``write(to:)`` (JSON) and ``appendCSVRow(to:)``. Its links are kept as text (``WebLink``):
/// it only writes them out.
public struct PostRecord: Sendable {
    public struct Author: Sendable { public var id, handle, displayName: String; public var avatarURL: WebLink? }
    public struct Counts: Sendable { public var replies, reposts, likes, quotes: Int }
    public struct VideoRow: Sendable {
        public var id, title: String
        public var durationSeconds: Double
        public var streamURL: WebLink
        public var thumbnailURL: WebLink?
        public var sizeBytes: Int64?
        public var width, height: Int?
        public var framesPerSecond: Double?
        public var viewCount: Int?
        public var rating: Double?
        public var likeCount: Int?
        public var author: String?
    }
    public struct Repost: Sendable { public var by: Author; public var originalID: String; public var at: Date? }
    public struct Attachment: Sendable {
        public var kind: String
        public var url: WebLink
        public var previewURL: WebLink?
        public var description, title, mimeType: String?
        public var sizeBytes: Int64?
        public var width, height: Int?
        public var durationSeconds: Double?
        public var episode, season: Int?
    }
    public var feed, id: String
    public var author: Author
    public var text: String
    public var createdAt: Date
    public var editedAt: Date?
    public var replyTo: String?
    public var counts: Counts
    public var videoIDs: [String]
    public var videos: [VideoRow]
    public var html, contentWarning, language, visibility: String?
    public var repost: Repost?
    public var attachments: [Attachment]
    public var title: String?
    public var url: WebLink?
    public var quoteOf: String?
    public var labels: [String]
    public var read: Bool
    /// Whether the post carries a star.
    public var starred: Bool

    public init(_ stored: StoredPost) {
        let post = stored.post
        feed = stored.feed
        id = post.id.rawValue
        author = Self.author(post.author)
        text = post.text
        createdAt = post.createdAt
        editedAt = post.editedAt
        replyTo = post.replyTo?.rawValue
        counts = Counts(replies: post.counts.replies, reposts: post.counts.reposts, likes: post.counts.likes, quotes: post.counts.quotes)
        videoIDs = post.videoIDs.map(\.rawValue)
        videos = stored.videos.map(VideoRow.init)
        html = post.html
        contentWarning = post.contentWarning
        language = post.language
        visibility = post.visibility?.rawValue
        repost = post.repost.map { Repost(by: Self.author($0.by), originalID: $0.originalID.rawValue, at: $0.at) }
        attachments = post.attachments.map {
            Attachment(kind: $0.kind, url: $0.link, previewURL: $0.previewLink, description: $0.description, title: $0.title,
                       mimeType: $0.mimeType, sizeBytes: $0.sizeBytes, width: $0.width, height: $0.height,
                       durationSeconds: $0.duration, episode: $0.episode, season: $0.season)
        }
        title = post.title
        url = post.link
        quoteOf = post.quoteOf?.rawValue
        labels = post.labels
        read = stored.isRead
        starred = stored.isStarred
    }

    static func author(_ user: User) -> Author {
        Author(id: user.id.rawValue, handle: user.handle, displayName: user.displayName, avatarURL: user.avatar)
    }
}

extension PostRecord.VideoRow {
    /// A resolved video as the record shows it.
    init(_ video: Video) {
        self.init(id: video.id.rawValue, title: video.title, durationSeconds: video.duration, streamURL: video.stream,
                  thumbnailURL: video.thumbnail, sizeBytes: video.sizeBytes, width: video.width, height: video.height,
                  framesPerSecond: video.framesPerSecond, viewCount: video.viewCount, rating: video.rating,
                  likeCount: video.likeCount, author: video.author)
    }
}
