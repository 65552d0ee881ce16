import Foundation

/// Which posts to read back.
///
/// Every store lists posts newest first; posts of the same instant by feed, then id (ascending).
/// `unreadOnly` and `starredOnly` hold in both listings, the newest-first one and the stable walk.
public struct PostQuery: Hashable, Sendable {
    public var feed: String?
    public var limit: Int
    public var unreadOnly: Bool
    /// Only posts that carry a star.
    public var starredOnly: Bool
    /// Only posts created at or after this time.
    public var since: Date?
    /// Read one page of a stable walk of one feed (`feed` is then required), for export.
    public var stable: Bool
    /// In a stable walk: continue after this post; `nil` for the first page.
    public var after: StoredPost.Position?
    /// In the newest-first listing: continue after this post (its time, feed and id); `nil`
    /// for the first page. A reader app's continuation.
    public var continuing: StoredPost.ListingPosition?
    /// Lists oldest first instead (the listing's exact reverse: time, then feed and id
    /// descending); `continuing` then continues after that post in this order. Not for a
    /// stable walk.
    public var oldestFirst = false
    /// Only posts created at or before this time (a reader app's `nt`). Not for a stable walk.
    public var until: Date?

    public init(feed: String? = nil, limit: Int = 20, unreadOnly: Bool = false, starredOnly: Bool = false, since: Date? = nil,
                stable: Bool = false, after: StoredPost.Position? = nil, continuing: StoredPost.ListingPosition? = nil) {
        self.feed = feed
        self.limit = limit
        self.unreadOnly = unreadOnly
        self.starredOnly = starredOnly
        self.since = since
        self.stable = stable
        self.after = after
        self.continuing = continuing
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
