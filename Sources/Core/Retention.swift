import Foundation

/// How long a feed's posts are kept, from a feed's or the config's `"keep"` object:
/// `{"days": 90, "posts": 10000, "evenUnread": false}`.
///
/// After each sync, under the feed's lease, the posts older than ``days`` and those beyond the
/// newest ``posts`` are removed in bounded batches (``PostPruner``). Unread posts are kept
/// unless ``evenUnread``.
public struct Retention: Sendable, Hashable {
    /// Posts created more than this many days ago go; `nil`: no age limit.
    public var days: Int?
    /// Only the newest this many posts stay; `nil`: no count limit.
    public var posts: Int?
    /// Whether unread posts go too.
    public var evenUnread: Bool

    public init(days: Int? = nil, posts: Int? = nil, evenUnread: Bool = false) {
        self.days = days
        self.posts = posts
        self.evenUnread = evenUnread
    }

    /// The time before which a post is too old, `now` less ``days``; `nil` without an age limit.
    public func horizon(now: Date) -> Date? { days.map { now.addingTimeInterval(-Double($0) * 86_400) } }
}

/// The store's role that removes what a ``Retention`` no longer keeps.
public protocol PostPruner: Sendable {
    /// Removes, in one transaction, at most `limit` posts of the lease's feed that `retention`
    /// does not keep at `now`, oldest first.
    ///
    /// - Returns: how many posts were removed; fewer than `limit` when no more are due.
    /// - Throws: ``ServiceError`` `.locked` when `lease` was lost (nothing is removed).
    func prune(_ retention: Retention, now: Date, limit: Int, under lease: FeedLease) async throws -> Int
}
