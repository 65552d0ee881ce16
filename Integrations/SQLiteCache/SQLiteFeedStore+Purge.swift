import Core
import Foundation

extension SQLiteFeedStore {
    /// Deletes the feed's rows and its live state in one transaction. The account's session is
    /// not the feed's: it stays for the account's other feeds (`feedsync logout` ends it).
    ///
    /// A sync in another process may be writing a page of the feed: the purge takes the
    /// store's write lock first, as a pull does (waiting as long as the store waits for a busy
    /// database), so no page lands after it.
    public func purge(feed: String) async throws -> Int {
        let operation = "purging feed \(feed)"
        let wait = TimeInterval(busyTimeoutMilliseconds) / 1000
        guard let lease = try await acquireLease(onFeed: feed, holder: "feedsync remove --purge", wait: wait, onlyIfDue: false) else {
            throw ServiceError(.locked, operation, "the store's write lock could not be taken")
        }
        defer { release(lease) }
        let db = try db(operation)
        let posts = try storage(operation) {
            try db.withTransaction {
                // Links first (they refer to posts and videos), then what refers to users.
                try db.statement("DELETE FROM post_videos WHERE post_pk IN (SELECT pk FROM posts WHERE feed = ?1)").run([.text(feed)])
                try db.statement("DELETE FROM posts WHERE feed = ?1").run([.text(feed)])
                let posts = db.changes
                for table in ["videos", "users", "post_state", "sync_runs", "feeds"] {
                    let column = table == "feeds" ? "name" : "feed"
                    try db.statement("DELETE FROM \(table) WHERE \(column) = ?1").run([.text(feed)])
                }
                // Made on first use by a daemon that streams, so it may not exist.
                let live = try db.statement("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'live_state'").query { $0.int64(0) }
                if live.first == 1 { try db.statement("DELETE FROM live_state WHERE feed = ?1").run([.text(feed)]) }
                return posts
            }
        }
        return posts
    }
}
