import Core
import Foundation

/// Retention: the oldest posts a feed's `"keep"` no longer keeps, a bounded batch at a time.
extension StoreSQL {
    /// What a post must be to go: of the feed `$1`, not starred, and read unless `$2` is 1.
    private static let due = """
        SELECT p.pk FROM posts p LEFT JOIN post_state s ON s.feed = p.feed AND s.post_id = p.id
        WHERE p.feed = $1 AND s.starred_at IS NULL AND ($2 = 1 OR s.read_at IS NOT NULL)
        """
    /// Older than `$3` (ms), at most `$4` of them, oldest first.
    private static let pruneByAge = Shared("""
        DELETE FROM posts WHERE pk IN (\(due) AND p.created_at < $3 ORDER BY p.created_at, p.id LIMIT $4)
        RETURNING 1
        """)
    /// Not among the newest `$3`, at most `$4` of them, oldest first.
    private static let pruneByCount = Shared("""
        DELETE FROM posts WHERE pk IN (\(due) AND p.pk NOT IN (SELECT pk FROM posts WHERE feed = $1
                                                                ORDER BY created_at DESC, id DESC LIMIT $3)
                                       ORDER BY p.created_at, p.id LIMIT $4)
        RETURNING 1
        """)

    /// Adds `count` to what retention removed from the feed `$1`, at `$3` (ms).
    private static let recordPruned = Shared("""
        INSERT INTO feeds (name, pruned_posts, pruned_at) VALUES ($1, $2, $3)
        ON CONFLICT (name) DO UPDATE SET pruned_posts = feeds.pruned_posts + excluded.pruned_posts, pruned_at = excluded.pruned_at
        """)

    /// The statement that records, for `status`, that retention removed `count` posts of `feed` at `now`.
    public func recordPruned(_ count: Int, ofFeed feed: String, now: Date) -> StoreStatement {
        statement(Self.recordPruned, [.text(feed), .integer(count), .integer(StoredTime.milliseconds(now))])
    }

    /// The statements that delete at most `limit` posts each of `feed` that `retention` does
    /// not keep at `now`: those past its age, then those beyond its count. The rows each
    /// returns are the posts it removed.
    public func prune(_ retention: Retention, ofFeed feed: String, now: Date, limit: Int) -> [StoreStatement] {
        let unread: SQLValue = .integer(retention.evenUnread ? 1 : 0)
        var statements: [StoreStatement] = []
        if let horizon = retention.horizon(now: now) {
            statements.append(statement(Self.pruneByAge, [.text(feed), unread, .integer(StoredTime.milliseconds(horizon)), .integer(limit)]))
        }
        if let posts = retention.posts {
            statements.append(statement(Self.pruneByCount, [.text(feed), unread, .integer(posts), .integer(limit)]))
        }
        return statements
    }
}
