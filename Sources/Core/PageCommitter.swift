import Foundation

/// The store's role that commits a feed page by page, each page with its cursor.
///
/// A store may do part of a commit ahead, on the caller's task: ``prepare(_:)`` turns a page
/// into the store's own ``PreparedPage`` (its rows, encoded), which ``apply(_:videos:under:)``
/// then writes. The sync engine prepares the next page while one commits.
///
///     guard let lease = try await store.acquireLease(onFeed: "home", holder: "feedsync", wait: 30, onlyIfDue: false) else { return }
///     let result = try await store.apply(store.prepare(page), videos: videos, under: lease, announcing: nil)
///     await store.release(lease)
public protocol PageCommitter: Sendable {
    /// A page as this store is going to write it, made by ``prepare(_:)``: ``FeedPage`` itself
    /// for a store that does nothing ahead.
    associatedtype PreparedPage: Sendable = FeedPage

    /// Where a feed's last committed page ended; `nil` before its first page.
    func cursor(ofFeed feed: String) async throws -> FeedCursor?

    /// Does the part of committing `page` that needs no database, such as encoding its rows,
    /// on the caller's task. The default, for a store whose ``PreparedPage`` is ``FeedPage``,
    /// returns the page as it is.
    func prepare(_ page: FeedPage) -> PreparedPage

    /// Commits one page of the lease's feed in one transaction: its posts and their authors,
    /// `videos`, the deletions, and the page's cursor (a streamed batch's page has none: the
    /// stored cursor stays as it is), stream position and renames, and the webhook deliveries
    /// `announcer` makes of it (``WebhookQueue``). Rows that already match are not rewritten.
    ///
    /// - Parameters:
    ///   - page: the page, as ``prepare(_:)`` made it.
    ///   - announcer: asked, in the transaction, which deliveries the page makes; `nil`: none.
    ///   - lease: the lease on the feed the page is written under, as
    ///     ``FeedLeases/acquireLease(onFeed:holder:wait:onlyIfDue:)`` gave it. A store whose
    ///     lease can run out checks in the page's transaction that it is still this one.
    /// - Important: On any error nothing of the page is kept and the cursor does not move.
    /// - Throws: ``ServiceError`` `.storage`; `.locked` when the lease was given back, or lost
    ///   meanwhile to another worker.
    func apply(_ page: PreparedPage, videos: [Video], under lease: FeedLease,
               announcing announcer: (any PageAnnouncer)?) async throws -> PageWriteResult

    /// How many pages, at most, this store commits in one transaction
    /// (``apply(_:under:announcing:)``): 1, the default, for a store that commits each page
    /// on its own.
    ///
    /// A page's commit has costs of its own whatever it holds (its `BEGIN` and `COMMIT`, their
    /// journal writes, a new segment of the search index); a store whose pages are small gains
    /// by sharing them between the pages a sync already has waiting.
    var pagesPerTransaction: Int { get }

    /// Commits `pages` of the lease's feed in order, in one transaction, each as
    /// ``apply(_:videos:under:announcing:)`` commits one: each with its own videos, cursor,
    /// renames and deliveries, so the feed's cursor ends where the last page left it.
    ///
    /// - Parameter pages: at most ``pagesPerTransaction`` pages, each with the videos its posts
    ///   refer to.
    /// - Returns: what each page did, in the pages' order.
    /// - Important: On any error nothing of any of the pages is kept and the cursor does not move.
    /// - Throws: as ``apply(_:videos:under:announcing:)``.
    func apply(_ pages: [(page: PreparedPage, videos: [Video])], under lease: FeedLease,
               announcing announcer: (any PageAnnouncer)?) async throws -> [PageWriteResult]
}

extension PageCommitter {
    public var pagesPerTransaction: Int { 1 }

    /// For a store of one page per transaction: commits the one page it is given. A store
    /// that takes more implements this itself, so that they commit together.
    public func apply(_ pages: [(page: PreparedPage, videos: [Video])], under lease: FeedLease,
                      announcing announcer: (any PageAnnouncer)?) async throws -> [PageWriteResult] {
        precondition(pages.count <= 1, "a store of more than one page per transaction commits them itself")
        guard let (page, videos) = pages.first else { return [] }
        return [try await apply(page, videos: videos, under: lease, announcing: announcer)]
    }
}

extension PageCommitter where PreparedPage == FeedPage {
    public func prepare(_ page: FeedPage) -> FeedPage { page }
}

extension PageCommitter {
    /// Prepares `page` and commits it: ``apply(_:videos:under:)`` for a caller with a plain
    /// page, such as one that holds the store as `any FeedStore`.
    public func apply(_ page: FeedPage, videos: [Video], under lease: FeedLease) async throws -> PageWriteResult {
        try await apply(prepare(page), videos: videos, under: lease, announcing: nil)
    }

    /// Prepares `page` and commits it with the deliveries `announcer` makes of it.
    public func apply(_ page: FeedPage, videos: [Video], under lease: FeedLease,
                      announcing announcer: (any PageAnnouncer)?) async throws -> PageWriteResult {
        try await apply(prepare(page), videos: videos, under: lease, announcing: announcer)
    }
}
