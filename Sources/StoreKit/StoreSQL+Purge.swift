import Core
import Foundation

/// Forgetting one feed: every row that names it, in one transaction.
extension StoreSQL {
    /// The tables, after `post_videos` and `posts`, that name a feed in their `feed` column;
    /// `feeds` (by `name`) comes last.
    private static let feedTables = ["videos", "users", "post_state", "sync_runs", "live_state", "media_refs"]

    private static let countPosts = Shared("SELECT COUNT(*) FROM posts WHERE feed = $1")
    private static let purge = (["""
        DELETE FROM post_videos WHERE post_pk IN (SELECT pk FROM posts WHERE feed = $1)
        """, "DELETE FROM posts WHERE feed = $1"] + feedTables.map { "DELETE FROM \($0) WHERE feed = $1" }).map(Shared.init)
    private static let purgeFeed = Shared("DELETE FROM feeds WHERE name = $1")

    /// How many posts the feed holds: what a purge deletes.
    public func postCount(ofFeed feed: String) -> StoreQuery<Int> {
        query(Self.countPosts, [.text(feed)]) { Int(clamping: $0.integer(0) ?? 0) }
    }

    /// The statements that delete every row of the feed: links first (they refer to posts and
    /// videos), then what refers to users, then the rest, the feed's own row last.
    ///
    /// - Parameter tables: the store's own tables that name feeds in a `feed` column, deleted
    ///   from before the feed's row (a shared store's `feed_leases`).
    public func purge(feed: String, alsoFrom tables: [String] = []) -> [StoreStatement] {
        Self.purge.map { statement($0, [.text(feed)]) }
            + tables.map { StoreStatement(dialect.render("DELETE FROM \($0) WHERE feed = $1"), [.text(feed)]) }
            + [statement(Self.purgeFeed, [.text(feed)])]
    }
}
