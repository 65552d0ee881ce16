import Foundation

/// A video attached to posts, as a video host describes it.
public struct Video: Hashable, Sendable, Identifiable {
    public var id: VideoID
    public var title: String
    /// Length in seconds.
    public var duration: TimeInterval
    /// Where it plays, as its link's text (``WebLink``).
    public var stream: WebLink
    public var thumbnail: WebLink?
    /// Size of the stream in bytes, when the host says.
    public var sizeBytes: Int64?
    /// Frame size in pixels and frame rate, when the host says.
    public var width: Int?
    public var height: Int?
    public var framesPerSecond: Double?
    /// How many times it was watched, when the host says (YouTube's `media:statistics views`).
    public var viewCount: Int?
    /// Its average rating, when the host says (YouTube's `media:starRating average`, 1 to 5).
    public var rating: Double?
    /// How many liked it, when the host says (PeerTube's `likes`).
    public var likeCount: Int?
    /// Who published it, as the host names them, when it says (YouTube oEmbed's `author_name`).
    public var author: String?

    public init(
        id: VideoID, title: String, duration: TimeInterval, streamURL: URL,
        thumbnailURL: URL? = nil, sizeBytes: Int64? = nil, width: Int? = nil, height: Int? = nil,
        framesPerSecond: Double? = nil, viewCount: Int? = nil, rating: Double? = nil, likeCount: Int? = nil, author: String? = nil
    ) {
        self.init(id: id, title: title, duration: duration, stream: WebLink(streamURL), thumbnail: thumbnailURL.map(WebLink.init),
                  sizeBytes: sizeBytes, width: width, height: height, framesPerSecond: framesPerSecond, viewCount: viewCount,
                  rating: rating, likeCount: likeCount, author: author)
    }

    /// As the initializer above, with the links as text: what a mapping makes from a host's
    /// answer without a `URL` parse.
    public init(
        id: VideoID, title: String, duration: TimeInterval, stream: WebLink,
        thumbnail: WebLink? = nil, sizeBytes: Int64? = nil, width: Int? = nil, height: Int? = nil,
        framesPerSecond: Double? = nil, viewCount: Int? = nil, rating: Double? = nil, likeCount: Int? = nil, author: String? = nil
    ) {
        self.id = id
        self.title = title
        self.duration = duration
        self.stream = stream
        self.thumbnail = thumbnail
        self.sizeBytes = sizeBytes
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.viewCount = viewCount
        self.rating = rating
        self.likeCount = likeCount
        self.author = author
    }
}

extension Video {
    /// ``stream`` as a Foundation `URL`, parsed when read.
    public var streamURL: URL {
        get { stream.url }
        set { stream = WebLink(newValue) }
    }

    /// ``thumbnail`` as a Foundation `URL`, parsed when read.
    public var thumbnailURL: URL? {
        get { thumbnail?.url }
        set { thumbnail = newValue.map(WebLink.init) }
    }
}
