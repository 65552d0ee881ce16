import Core
import Foundation

/// Read marks: local to this store, and kept through every sync.
extension SQLiteFeedStore {
    public func setRead(_ read: Bool, postID: PostID, inFeed feed: String?) throws -> [String] {
        let db = try db("marking post \(postID)")
        return try storage("marking post \(postID)") {
            try db.withTransaction {
                let feeds = try db.statement("SELECT feed FROM posts WHERE id = ?1 AND (?2 IS NULL OR feed = ?2) ORDER BY feed")
                    .query([.text(postID.rawValue), .text(feed)]) { $0.string(0) ?? "" }
                guard feeds.count == 1 else { return feeds }
                let values: [SQLiteValue] = [.text(feeds[0]), .text(postID.rawValue), .integer(millisecondsSince1970(Date()))]
                if read {
                    try db.statement("""
                        INSERT INTO post_state (feed, post_id, read_at) VALUES (?1, ?2, ?3)
                        ON CONFLICT DO UPDATE SET read_at = ?3 WHERE post_state.read_at IS NULL
                        """).run(values)
                } else {
                    try db.statement("UPDATE post_state SET read_at = NULL WHERE feed = ?1 AND post_id = ?2").run(Array(values.prefix(2)))
                }
                return feeds
            }
        }
    }
}
