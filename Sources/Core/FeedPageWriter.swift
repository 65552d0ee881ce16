import Foundation

/// A page as a store is going to write it: see ``FeedPageWriter/prepare(_:)``.
public protocol PreparedPage: Sendable {
    /// The page it was prepared from.
    var page: FeedPage { get }
}

extension FeedPage: PreparedPage {
    public var page: FeedPage { self }
}

/// The write side of the mirror: commits a feed page by page, each page with its cursor.
public protocol FeedPageWriter: Sendable {
    /// Where a feed's last committed page ended; `nil` before its first page.
    func cursor(ofFeed feed: String) async throws -> FeedCursor?

    /// The identity of the backend the feed's cursor and posts came from (``FeedBackend/identity``);
    /// `nil` before its first sync.
    func backend(ofFeed feed: String) async throws -> String?

    /// Records the backend a feed now mirrors, once a sync of it has completed.
    func setBackend(_ backend: String, ofFeed feed: String) async throws

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
    /// - Throws: ``ServiceError`` `.storage`; `.locked` when the feed's lease was lost meanwhile.
    func apply(_ page: any PreparedPage, videos: [Video], toFeed feed: String) async throws -> PageWriteResult

    /// How many cached posts of the walk's feed the walk has not seen, of how many cached.
    func unseenPosts(of walk: FullWalk) async throws -> (unseen: Int, cached: Int)

    /// Deletes the cached posts of the walk's feed that the walk has not seen, in one transaction.
    /// - Returns: the posts deleted.
    func deleteUnseenPosts(of walk: FullWalk) async throws -> Int

    /// Stores videos resolved outside a page (retries of earlier unresolved ones).
    /// - Returns: the rows written.
    func saveVideos(_ videos: [Video], inFeed feed: String) async throws -> Int

    /// Records how a sync run ended, counting consecutive failures (a success resets them), and
    /// on a success the report's ``PollingHint`` location and stop reason (cleared when absent).
    func recordSync(_ outcome: SyncOutcome, ofFeed feed: String) async throws
}

extension FeedPageWriter {
    public func prepare(_ page: FeedPage) -> any PreparedPage { page }
}
