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

        public init(replies: Int = 0, reposts: Int = 0, likes: Int = 0) {
            self.replies = replies
            self.reposts = reposts
            self.likes = likes
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

    public init(
        id: PostID, author: User, text: String, createdAt: Date, editedAt: Date? = nil,
        replyTo: PostID? = nil, counts: Counts = Counts(), videoIDs: [VideoID] = []
    ) {
        self.id = id
        self.author = author
        self.text = text
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.replyTo = replyTo
        self.counts = counts
        self.videoIDs = videoIDs
    }
}
