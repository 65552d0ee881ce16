import Foundation

/// A page as a store is going to write it: see ``FeedStore/prepare(_:)``.
public protocol PreparedPage: Sendable {
    /// The page it was prepared from.
    var page: FeedPage { get }
}

extension FeedPage: PreparedPage {
    public var page: FeedPage { self }
}

/// The local mirror: where feeds are committed page by page and read back.
///
/// Every feed is its own namespace: post, user and video ids are unique within a feed.
public protocol FeedStore: Sendable {
    /// Where a feed's last committed page ended; `nil` before its first page.
    func cursor(ofFeed feed: String) async throws -> FeedCursor?

    /// The identity of the backend the feed's cursor and posts came from (``FeedBackend/identity``);
    /// `nil` before its first sync.
    func backend(ofFeed feed: String) async throws -> String?

    /// Records the backend a feed now mirrors, once a sync of it has completed.
    func setBackend(_ backend: String, ofFeed feed: String) async throws

    /// The session saved for a feed, if the backend that issued it is `backend`.
    ///
    /// Sessions hold tokens: a store keeps them apart from the mirror it lets others read.
    func session(ofFeed feed: String, backend: String) async throws -> Session?

    /// Saves a feed's session, issued by `backend`, so the next run can reuse it.
    func saveSession(_ session: Session, ofFeed feed: String, backend: String) async throws

    /// Of `ids`, the videos the store does not yet hold resolved, in the order given.
    func videosToResolve(among ids: [VideoID], inFeed feed: String) async throws -> [VideoID]

    /// Up to `limit` videos that earlier syncs could not resolve.
    func unresolvedVideoIDs(inFeed feed: String, limit: Int) async throws -> [VideoID]

    /// Does the part of committing `page` that needs no database, such as encoding its rows,
    /// on the caller's task. The sync engine prepares the next pages while one commits.
    /// The default returns the page as it is.
    func prepare(_ page: FeedPage) -> any PreparedPage

    /// Commits one page in one transaction: its posts and their authors, `videos`, the
    /// deletions, and the page's cursor. Rows that already match are not rewritten. `page`
    /// may come from ``prepare(_:)`` or be a plain ``FeedPage``.
    ///
    /// - Important: On any error nothing of the page is kept and the cursor does not move.
    /// - Throws: ``ServiceError`` `.storage`.
    func apply(_ page: any PreparedPage, videos: [Video], toFeed feed: String) async throws -> PageWriteResult

    /// Starts noting which posts of `feed` the pages committed from now on carry, for a full
    /// sync to find the cached posts the server no longer has.
    func beginFullWalk(ofFeed feed: String) async throws

    /// How many cached posts of `feed` the full walk has not seen, of how many cached.
    func unseenPosts(ofFeed feed: String) async throws -> (unseen: Int, cached: Int)

    /// Ends the full walk, deleting the unseen posts (in one transaction) when `deleteUnseen`.
    /// - Returns: the posts deleted.
    func finishFullWalk(ofFeed feed: String, deleteUnseen: Bool) async throws -> Int

    /// Stores videos resolved outside a page (retries of earlier unresolved ones).
    /// - Returns: the rows written.
    func saveVideos(_ videos: [Video], inFeed feed: String) async throws -> Int

    /// Records how a sync run ended, counting consecutive failures (a success resets them), and
    /// on a success the report's ``PollingHint`` location and stop reason (cleared when absent).
    func recordSync(_ outcome: SyncOutcome, ofFeed feed: String) async throws

    /// Takes the store's write lock, so that one process at a time syncs into it.
    ///
    /// Reentrant within a process (several feeds of one daemon share it): every successful
    /// call needs one ``releaseWriteLock()``.
    ///
    /// - Parameters:
    ///   - holder: who takes it, for the message another process sees: `"feedsync pull"`.
    ///   - wait: how long to wait for another process to let go.
    /// - Returns: the process id of a dead holder whose stale lock was taken over, if any.
    /// - Throws: ``ServiceError`` `.locked` naming the holder when the wait runs out.
    func acquireWriteLock(holder: String, wait: TimeInterval) async throws -> Int32?

    /// Gives back one hold of the write lock.
    func releaseWriteLock() async

    /// Makes this process the store's one daemon for as long as it runs or until
    /// ``releaseDaemonLease()``: two daemons on one store would double every poll.
    ///
    /// - Throws: ``ServiceError`` `.locked` naming the daemon that already serves the store.
    func holdDaemonLease() async throws

    /// Gives the daemon lease back.
    func releaseDaemonLease() async

    /// Records when the daemon will next sync a feed (`nil`: not scheduled).
    func setNextAttempt(_ date: Date?, ofFeed feed: String) async throws

    /// Records that a daemon is alive.
    func beat(_ heartbeat: DaemonHeartbeat) async throws

    /// Removes the daemon's record when it stops, if it is still that daemon's.
    func clearHeartbeat(pid: Int32) async throws

    /// The last daemon heartbeat, if a daemon has run and not stopped cleanly.
    func heartbeat() async throws -> DaemonHeartbeat?

    /// Per feed: cursor, last success and error, post count. Feeds the store has never seen
    /// are absent.
    func feedStatuses() async throws -> [FeedStatus]

    /// Posts newest first.
    ///
    /// With ``PostQuery/stable``, one page of a stable walk of one feed (for export): newest
    /// first, posts of equal time by id, starting after ``PostQuery/after``.
    func posts(matching query: PostQuery) async throws -> [StoredPost]

    /// Every feed the store holds posts or state for, by name.
    func feedNames() async throws -> [String]

    /// Posts matching a full-text query, best first.
    ///
    /// - Throws: ``ServiceError`` `.invalidRequest` for a query that is not valid search syntax.
    func search(_ query: SearchQuery) async throws -> [SearchHit]

    /// Marks a post read or unread. The mark is local state: no sync ever changes it.
    ///
    /// - Parameter feed: the feed to look in; `nil` for every feed.
    /// - Returns: the feeds holding a post with that id (marked only when exactly one does).
    func setRead(_ read: Bool, postID: PostID, inFeed feed: String?) async throws -> [String]
}

extension FeedStore {
    public func prepare(_ page: FeedPage) -> any PreparedPage { page }
}

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
    /// Where the feed is now read from, when its server moved it permanently.
    public var location: String?
    /// Why polling stopped until the feed's config changes (a 410 Gone), if it did.
    public var pollingStopped: String?

    public init(feed: String, cursor: FeedCursor? = nil, lastSuccessAt: Date? = nil, lastErrorAt: Date? = nil,
                lastError: String? = nil, consecutiveFailures: Int = 0, nextAttemptAt: Date? = nil, postCount: Int = 0,
                location: String? = nil, pollingStopped: String? = nil) {
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

/// Which posts to read back.
public struct PostQuery: Hashable, Sendable {
    public var feed: String?
    public var limit: Int
    public var unreadOnly: Bool
    /// Only posts created at or after this time.
    public var since: Date?
    /// Read one page of a stable walk of one feed (`feed` is then required), for export.
    public var stable: Bool
    /// In a stable walk: continue after this post; `nil` for the first page.
    public var after: StoredPost.Position?

    public init(feed: String? = nil, limit: Int = 20, unreadOnly: Bool = false, since: Date? = nil, stable: Bool = false,
                after: StoredPost.Position? = nil) {
        self.feed = feed
        self.limit = limit
        self.unreadOnly = unreadOnly
        self.since = since
        self.stable = stable
        self.after = after
    }
}

/// A full-text query: FTS5 syntax (words, `"phrases"`, `OR`, `prefix*`).
public struct SearchQuery: Hashable, Sendable {
    public var text: String
    public var feed: String?
    public var since: Date?
    public var limit: Int

    public init(text: String, feed: String? = nil, since: Date? = nil, limit: Int = 20) {
        self.text = text
        self.feed = feed
        self.since = since
        self.limit = limit
    }
}

/// A post that matched a search.
public struct SearchHit: Hashable, Sendable {
    public var stored: StoredPost
    /// The best-matching stretch of the post, each matching term between U+E000 and U+E001.
    public var snippet: String
    /// The relevance (bm25); smaller is better.
    public var rank: Double

    public init(stored: StoredPost, snippet: String, rank: Double) {
        self.stored = stored
        self.snippet = snippet
        self.rank = rank
    }
}

/// A post as the store holds it, with its local state and its resolved videos.
public struct StoredPost: Hashable, Sendable {
    public var feed: String
    public var post: Post
    public var isRead: Bool
    /// The post's videos that are resolved, in the post's order.
    public var videos: [Video]

    public init(feed: String, post: Post, isRead: Bool, videos: [Video] = []) {
        self.feed = feed
        self.post = post
        self.isRead = isRead
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
}

/// A daemon's sign of life in the store.
public struct DaemonHeartbeat: Hashable, Sendable {
    public var pid: Int32
    public var startedAt: Date
    public var beatAt: Date

    public init(pid: Int32, startedAt: Date, beatAt: Date) {
        self.pid = pid
        self.startedAt = startedAt
        self.beatAt = beatAt
    }
}
