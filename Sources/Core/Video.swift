import Foundation

/// A video attached to posts, as a video host describes it.
public struct Video: Hashable, Sendable, Identifiable {
    public var id: VideoID
    public var title: String
    /// Length in seconds.
    public var duration: TimeInterval
    public var streamURL: URL
    public var thumbnailURL: URL?
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
        self.id = id
        self.title = title
        self.duration = duration
        self.streamURL = streamURL
        self.thumbnailURL = thumbnailURL
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
