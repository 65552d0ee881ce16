import Core
import Foundation

/// Read marks and stars: local to the store, and kept through every sync.
extension StoreSQL {
    private static let feedsHolding = Shared("SELECT feed FROM posts WHERE id = $1 AND feed = coalesce($2, feed) ORDER BY feed")
    private static let markRead = Shared("""
        INSERT INTO post_state (feed, post_id, read_at) VALUES ($1, $2, $3)
        ON CONFLICT (feed, post_id) DO UPDATE SET read_at = excluded.read_at WHERE post_state.read_at IS NULL
        """)
    private static let markUnread = Shared("UPDATE post_state SET read_at = NULL WHERE feed = $1 AND post_id = $2")
    private static let star = Shared("""
        INSERT INTO post_state (feed, post_id, starred_at) VALUES ($1, $2, $3)
        ON CONFLICT (feed, post_id) DO UPDATE SET starred_at = excluded.starred_at WHERE post_state.starred_at IS NULL
        """)
    private static let unstar = Shared("UPDATE post_state SET starred_at = NULL WHERE feed = $1 AND post_id = $2")

    /// The feeds holding a post with this id: `feed` alone, or every feed when `nil`.
    public func feeds(holding postID: PostID, in feed: String?) -> StoreQuery<String> {
        query(Self.feedsHolding, [.text(postID.rawValue), .text(feed)]) { $0.text(0) ?? "" }
    }

    /// Marks the post read (at `date`, unless it is read already) or unread.
    public func setRead(_ read: Bool, postID: PostID, inFeed feed: String, at date: Date) -> StoreStatement {
        read ? statement(Self.markRead, [.text(feed), .text(postID.rawValue), .integer(StoredTime.milliseconds(date))])
            : statement(Self.markUnread, [.text(feed), .text(postID.rawValue)])
    }

    /// Stars the post (at `date`, unless it is starred already) or takes its star away.
    public func setStarred(_ starred: Bool, postID: PostID, inFeed feed: String, at date: Date) -> StoreStatement {
        starred ? statement(Self.star, [.text(feed), .text(postID.rawValue), .integer(StoredTime.milliseconds(date))])
            : statement(Self.unstar, [.text(feed), .text(postID.rawValue)])
    }
}
