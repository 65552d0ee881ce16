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
    private static let byAge = "AND p.created_at < $3 ORDER BY p.created_at, p.id LIMIT $4"
    private static let pruneByAge = Shared("DELETE FROM posts WHERE pk IN (\(due) \(byAge)) RETURNING 1")
    /// Not among the newest `$3`, at most `$4` of them, oldest first.
    private static let byCount = """
        AND p.pk NOT IN (SELECT pk FROM posts WHERE feed = $1 ORDER BY created_at DESC, id DESC LIMIT $3)
        ORDER BY p.created_at, p.id LIMIT $4
        """
    private static let pruneByCount = Shared("DELETE FROM posts WHERE pk IN (\(due) \(byCount)) RETURNING 1")
    /// The media references of the posts the statement after it removes (the same rows, in
    /// the same transaction), so their files become unreferenced and `feedsync media prune`
    /// removes them. Returns no rows: it counts for nothing.
    private static func forgetMedia(_ selection: String) -> Shared {
        Shared("DELETE FROM media_refs WHERE feed = $1 AND post_id IN (\(due.replacingOccurrences(of: "SELECT p.pk", with: "SELECT p.id")) \(selection))")
    }
    private static let forgetMediaByAge = forgetMedia(byAge)
    private static let forgetMediaByCount = forgetMedia(byCount)

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
    /// not keep at `now`: those past its age, then those beyond its count, each after the one
    /// that forgets the media references of the same posts. The rows each returns are the
    /// posts it removed (none for the references).
    public func prune(_ retention: Retention, ofFeed feed: String, now: Date, limit: Int) -> [StoreStatement] {
        let unread: SQLValue = .integer(retention.evenUnread ? 1 : 0)
        var statements: [StoreStatement] = []
        if let horizon = retention.horizon(now: now) {
            let values: [SQLValue] = [.text(feed), unread, .integer(StoredTime.milliseconds(horizon)), .integer(limit)]
            statements += [statement(Self.forgetMediaByAge, values), statement(Self.pruneByAge, values)]
        }
        if let posts = retention.posts {
            let values: [SQLValue] = [.text(feed), unread, .integer(posts), .integer(limit)]
            statements += [statement(Self.forgetMediaByCount, values), statement(Self.pruneByCount, values)]
        }
        return statements
    }
}
