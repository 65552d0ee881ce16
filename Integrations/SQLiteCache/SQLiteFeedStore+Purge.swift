import Core
import Foundation

extension SQLiteFeedStore {
    public func purge(feed: String) throws -> Int {
        let operation = "purging feed \(feed)"
        let db = try db(operation)
        return try storage(operation) {
            try db.withTransaction {
                // Links first (they refer to posts and videos), then what refers to users.
                try db.statement("DELETE FROM post_videos WHERE post_pk IN (SELECT pk FROM posts WHERE feed = ?1)").run([.text(feed)])
                try db.statement("DELETE FROM posts WHERE feed = ?1").run([.text(feed)])
                let posts = db.changes
                for table in ["videos", "users", "post_state", "sync_runs", "feeds"] {
                    let column = table == "feeds" ? "name" : "feed"
                    try db.statement("DELETE FROM \(table) WHERE \(column) = ?1").run([.text(feed)])
                }
                return posts
            }
        }
    }
}
