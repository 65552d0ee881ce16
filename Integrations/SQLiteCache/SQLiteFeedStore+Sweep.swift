import Core
import Foundation
import StoreKit

/// The sweep after a walk from the start; the feed's backend is ``SQLStore``'s.
extension SQLiteFeedStore {
    /// The ids of the feed's cached posts the walk did not see.
    private func unseenIDs(of walk: FullWalk, in db: SQLiteDatabase) throws -> (unseen: [String], cached: Int) {
        let cached = try db.statement("SELECT id FROM posts WHERE feed = ?").query([.text(walk.feed)]) { $0.string(0) ?? "" }
        return (cached.filter { !walk.seen.contains(PostID($0)) }, cached.count)
    }

    public func unseenPosts(of walk: FullWalk) throws -> (unseen: Int, cached: Int) {
        let db = try db("counting posts of feed \(walk.feed)")
        return try storage("counting posts of feed \(walk.feed)") {
            try db.withReadTransaction {
                let (unseen, cached) = try unseenIDs(of: walk, in: db)
                return (unseen.count, cached)
            }
        }
    }

    public func deleteUnseenPosts(of walk: FullWalk, under lease: FeedLease) throws -> Int {
        // SQLite's lease is this process's lock on the file, which it cannot lose (see `apply`).
        let db = try db("finishing the full sync of feed \(walk.feed)")
        return try storage("finishing the full sync of feed \(walk.feed)") {
            try db.withTransaction {
                let delete = try db.statement("DELETE FROM posts WHERE feed = ?1 AND id = ?2")
                var deleted = 0
                for id in try unseenIDs(of: walk, in: db).unseen {
                    try delete.run([.text(walk.feed), .text(id)])
                    deleted += db.changes
                }
                return deleted
            }
        }
    }
}
