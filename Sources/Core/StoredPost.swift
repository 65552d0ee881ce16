import Foundation

/// A post as the store holds it, with its local state and its resolved videos.
public struct StoredPost: Hashable, Sendable {
    public var feed: String
    public var post: Post
    public var isRead: Bool
    /// Whether the post carries a star (`feedsync star`, a reader app).
    public var isStarred: Bool
    /// The post's videos that are resolved, in the post's order.
    public var videos: [Video]

    public init(feed: String, post: Post, isRead: Bool, isStarred: Bool = false, videos: [Video] = []) {
        self.feed = feed
        self.post = post
        self.isRead = isRead
        self.isStarred = isStarred
        self.videos = videos
    }

    /// Where a stable walk of a feed stands after this post.
    public struct Position: Hashable, Sendable {
        public var createdAt: Date
        public var id: PostID

        public init(createdAt: Date, id: PostID) {
            self.createdAt = createdAt
            self.id = id
        }
    }

    public var position: Position { Position(createdAt: post.createdAt, id: post.id) }

    /// Where the newest-first listing of every feed stands after this post: its order is time
    /// (newest first), then feed, then id.
    public struct ListingPosition: Hashable, Sendable {
        public var createdAt: Date
        public var feed: String
        public var id: PostID

        public init(createdAt: Date, feed: String, id: PostID) {
            self.createdAt = createdAt
            self.feed = feed
            self.id = id
        }

        /// Whether this comes before `other` in the listing: newer, or as new and by feed, then id.
        public func isBefore(_ other: ListingPosition) -> Bool {
            if createdAt != other.createdAt { return createdAt > other.createdAt }
            if feed != other.feed { return feed < other.feed }
            return id.rawValue < other.id.rawValue
        }
    }

    public var listingPosition: ListingPosition { ListingPosition(createdAt: post.createdAt, feed: feed, id: post.id) }
}

/// A post that matched a search.
public struct SearchHit: Hashable, Sendable {
    public var stored: StoredPost
    /// The best-matching stretch of the post, each matching term between U+E000 and U+E001.
    public var snippet: String
    /// The relevance: smaller is better, and a search's hits come in this order. The scale is
    /// the store's own (SQLite's bm25, PostgreSQL's `ts_rank` negated), so compare ranks within
    /// one search only.
    public var rank: Double

    public init(stored: StoredPost, snippet: String, rank: Double) {
        self.stored = stored
        self.snippet = snippet
        self.rank = rank
    }
}
