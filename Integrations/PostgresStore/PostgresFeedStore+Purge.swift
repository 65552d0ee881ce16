import Core
import Foundation

extension PostgresFeedStore: FeedPurger {
    public func purge(feed: String) throws -> Int {
        let operation = "purging feed \(feed)"
        let db = try db(operation)
        return try storage(operation) {
            try db.transaction {
                // A worker that holds the feed's lease now may still commit a page: refuse rather than race it.
                let holders = try db.query("SELECT holder FROM feed_leases WHERE feed = $1 AND token IS NOT NULL AND expires_at > "
                                           + "\(Self.nowMs) FOR UPDATE", [feed])
                if let holder = holders.first?.first ?? nil {
                    throw ServiceError(.locked, operation, "\(holder) is syncing it now; try again when that sync is done")
                }
                try db.query("DELETE FROM post_videos WHERE post_pk IN (SELECT pk FROM posts WHERE feed = $1)", [feed])
                let posts = try db.query("DELETE FROM posts WHERE feed = $1 RETURNING 1", [feed]).count
                for table in ["videos", "users", "post_state", "sync_runs", "feed_leases"] {
                    try db.query("DELETE FROM \(table) WHERE feed = $1", [feed])
                }
                try db.query("DELETE FROM feeds WHERE name = $1", [feed])
                try db.query("DELETE FROM feedsync_private.sessions WHERE feed = $1", [feed])
                // Made on first use by a daemon that streams, so it may not exist.
                if try db.query("SELECT to_regclass('live_state') IS NOT NULL").first?.first == "t" {
                    try db.query("DELETE FROM live_state WHERE feed = $1", [feed])
                }
                return posts
            }
        }
    }
}
