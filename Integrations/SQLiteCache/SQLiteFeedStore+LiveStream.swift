import Core
import Foundation
import StoreKit

/// What a live stream needs of the store beside pages: where it had got to, and an author's new handle.
extension SQLiteFeedStore {
    public func streamPosition(ofFeed feed: String) throws -> String? {
        let db = try db("reading the stream position of feed \(feed)")
        return try storage("reading the stream position of feed \(feed)") {
            try db.statement("SELECT stream_position FROM feeds WHERE name = ?1").query([.text(feed)]) { $0.string(0) }.first ?? nil
        }
    }

    /// Gives `feed`'s stored author the new handle unless a newer profile is stored, inside the
    /// page's transaction (``FeedPage/renames``). The `users_au_profile` trigger carries the
    /// handle to the author's posts and their search entries.
    ///
    /// - Returns: whether the stored handle changed.
    func rename(_ rename: AuthorRename, feed: String, in db: SQLiteDatabase) throws -> Bool {
        try db.statement("""
            UPDATE users SET handle = ?3, profile_at = max(coalesce(profile_at, ?4), ?4)
            WHERE feed = ?1 AND id = ?2 AND handle IS NOT ?3 AND coalesce(profile_at, ?4) <= ?4
            """).run([.text(feed), .text(rename.author.rawValue), .text(rename.handle), .integer(StoredTime.milliseconds(rename.at))])
        return db.changes > 0
    }
}
