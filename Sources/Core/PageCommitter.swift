import Foundation

/// A page as a store is going to write it: see ``PageCommitter/prepare(_:)``.
public protocol PreparedPage: Sendable {
    /// The page it was prepared from.
    var page: FeedPage { get }
}

extension FeedPage: PreparedPage {
    public var page: FeedPage { self }
}

/// The store's role that commits a feed page by page, each page with its cursor.
public protocol PageCommitter: Sendable {
    /// Where a feed's last committed page ended; `nil` before its first page.
    func cursor(ofFeed feed: String) async throws -> FeedCursor?

    /// Does the part of committing `page` that needs no database, such as encoding its rows,
    /// on the caller's task. The sync engine prepares the next pages while one commits.
    /// The default returns the page as it is.
    func prepare(_ page: FeedPage) -> any PreparedPage

    /// Commits one page of the lease's feed in one transaction: its posts and their authors,
    /// `videos`, the deletions, and the page's cursor. Rows that already match are not
    /// rewritten. `page` may come from ``prepare(_:)`` or be a plain ``FeedPage``.
    ///
    /// - Parameter lease: the lease on the feed the page is written under, as
    ///   ``FeedLeases/acquireLease(onFeed:holder:wait:onlyIfDue:)`` gave it. A store whose lease
    ///   can run out checks in the page's transaction that it is still this one.
    /// - Important: On any error nothing of the page is kept and the cursor does not move.
    /// - Throws: ``ServiceError`` `.storage`; `.locked` when the lease was given back, or lost
    ///   meanwhile to another worker.
    func apply(_ page: any PreparedPage, videos: [Video], under lease: FeedLease) async throws -> PageWriteResult
}

extension PageCommitter {
    public func prepare(_ page: FeedPage) -> any PreparedPage { page }
}
