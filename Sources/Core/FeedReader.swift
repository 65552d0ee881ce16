import Foundation

/// The read side of the mirror: what `status`, `posts`, `search` and `export` show.
public protocol FeedReader: Sendable {
    /// Per feed: cursor, last success and error, post count, lease holder. Feeds the store
    /// has never seen are absent.
    func feedStatuses() async throws -> [FeedStatus]

    /// The statuses of the feeds whose last success, last error or last prune is at or after
    /// `since`, by the times the store recorded: what a caller that read every status before
    /// reads again to stay current, without reading thousands of unchanged feeds. Posts a live
    /// stream wrote since, or a change recorded with a clock behind `since`, show only in
    /// ``feedStatuses()``.
    func feedStatuses(changedSince since: Date) async throws -> [FeedStatus]

    /// At most `limit` statuses of the feeds whose names sort after `name` (all when `nil`), by
    /// name: a walk over every status a page at a time.
    func feedStatuses(after name: String?, limit: Int) async throws -> [FeedStatus]

    /// Posts newest first.
    ///
    /// With ``PostQuery/stable``, one page of a stable walk of one feed (for export): newest
    /// first, posts of equal time by id, starting after ``PostQuery/after``.
    func posts(matching query: PostQuery) async throws -> [StoredPost]

    /// Where each post of a listing query (not ``PostQuery/stable``) stands: its time, feed and
    /// id alone, in the order and with the filters of ``posts(matching:)``. A list of ids needs
    /// nothing more, and a store reads it from its listing index without reading posts whole.
    func positions(matching query: PostQuery) async throws -> [StoredPost.ListingPosition]

    /// Each feed's change counter: it moves, in the writing transaction, whenever anything a
    /// served feed shows changes (a post or video written, changed or deleted, an author
    /// renamed); a feed absent has not changed since the store began counting (version 0).
    /// `nil` when the store keeps none. Read marks and stars do not move it.
    func feedVersions() async throws -> [String: Int64]?

    /// Every feed the store holds posts or state for, by name.
    func feedNames() async throws -> [String]

    /// Posts matching a full-text query, best first.
    ///
    /// - Throws: ``ServiceError`` `.invalidRequest` for a query that is not valid search syntax.
    func search(_ query: SearchQuery) async throws -> [SearchHit]

    /// The daemons that have joined the store and not left, oldest first.
    func daemons() async throws -> [DaemonInstance]
}

extension FeedReader {
    /// Every status, sorted and cut: for a reader that has no cheaper way.
    public func feedStatuses(after name: String?, limit: Int) async throws -> [FeedStatus] {
        let after = try await feedStatuses().filter { status in name.map { status.feed > $0 } ?? true }
        return Array(after.sorted { $0.feed < $1.feed }.prefix(max(limit, 1)))
    }

    /// Every status, filtered: for a reader that has no cheaper way.
    public func feedStatuses(changedSince since: Date) async throws -> [FeedStatus] {
        try await feedStatuses().filter { status in
            [status.lastSuccessAt, status.lastErrorAt, status.prunedAt].contains { ($0 ?? .distantPast) >= since }
        }
    }

    /// The positions of the posts read whole: for a reader that has no cheaper way.
    public func positions(matching query: PostQuery) async throws -> [StoredPost.ListingPosition] {
        try await posts(matching: query).map(\.listingPosition)
    }

    /// No counters: a served feed's validator is then computed from its posts.
    public func feedVersions() async throws -> [String: Int64]? { nil }
}

/// Local marks on posts: read and starred.
public protocol ReadMarker: Sendable {
    /// Marks a post read or unread. The mark is local state: no sync ever changes it.
    ///
    /// - Parameter feed: the feed to look in; `nil` for every feed.
    /// - Returns: the feeds holding a post with that id (marked only when exactly one does).
    func setRead(_ read: Bool, postID: PostID, inFeed feed: String?) async throws -> [String]

    /// Stars a post or takes its star away. Like a read mark, the star is local state: no sync
    /// ever changes it.
    ///
    /// - Parameter feed: the feed to look in; `nil` for every feed.
    /// - Returns: the feeds holding a post with that id (starred only when exactly one does).
    func setStarred(_ starred: Bool, postID: PostID, inFeed feed: String?) async throws -> [String]
}
