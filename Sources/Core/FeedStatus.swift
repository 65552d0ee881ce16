import Foundation

/// What the store knows about one feed.
public struct FeedStatus: Hashable, Sendable {
    public var feed: String
    public var cursor: FeedCursor?
    public var lastSuccessAt: Date?
    public var lastErrorAt: Date?
    public var lastError: String?
    public var consecutiveFailures: Int
    /// When the daemon plans to sync the feed next.
    public var nextAttemptAt: Date?
    public var postCount: Int
    /// Where the feed is now read from, when its server moved it permanently or it was
    /// discovered on the configured page (``discoveredFrom``).
    public var location: String?
    /// The HTML page ``location`` was discovered on; `nil` when the server moved the feed.
    public var discoveredFrom: String?
    /// Why polling stopped until the feed's config changes (a 410 Gone), if it did.
    public var pollingStopped: String?
    /// Who holds the feed's lease now, in words (`"feedsyncd on db1, process 4242"`), if anyone
    /// does that the store can tell apart from the others.
    public var leaseHolder: String?
    /// Why the last walk from the start deleted nothing as gone (``SyncReport/sweepWithheld``),
    /// until a later walk sweeps.
    public var sweepWithheld: String?
    /// How many posts retention (``Retention``) removed from the feed, in all, and when it last did.
    public var prunedPosts: Int
    public var prunedAt: Date?

    public init(feed: String, cursor: FeedCursor? = nil, lastSuccessAt: Date? = nil, lastErrorAt: Date? = nil,
                lastError: String? = nil, consecutiveFailures: Int = 0, nextAttemptAt: Date? = nil, postCount: Int = 0,
                location: String? = nil, discoveredFrom: String? = nil, pollingStopped: String? = nil, leaseHolder: String? = nil,
                sweepWithheld: String? = nil, prunedPosts: Int = 0, prunedAt: Date? = nil) {
        self.prunedPosts = prunedPosts
        self.prunedAt = prunedAt
        self.discoveredFrom = discoveredFrom
        self.sweepWithheld = sweepWithheld
        self.leaseHolder = leaseHolder
        self.location = location
        self.pollingStopped = pollingStopped
        self.consecutiveFailures = consecutiveFailures
        self.nextAttemptAt = nextAttemptAt
        self.feed = feed
        self.cursor = cursor
        self.lastSuccessAt = lastSuccessAt
        self.lastErrorAt = lastErrorAt
        self.lastError = lastError
        self.postCount = postCount
    }
}
