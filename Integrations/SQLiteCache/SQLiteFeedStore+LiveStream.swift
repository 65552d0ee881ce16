import Core
import Foundation
import StoreKit

/// What a live stream needs of the store beside pages: an author's new handle, in the page's
/// transaction. Where the stream had got to is ``SQLStore``'s `streamPosition(ofFeed:)`.
extension SQLiteFeedStore {
    /// Gives `feed`'s stored author the new handle unless a newer profile is stored, inside the
    /// page's transaction (``FeedPage/renames``). The `users_au_profile` trigger carries the
    /// handle to the author's posts and their search entries.
    ///
    /// - Returns: whether the stored handle changed.
    func rename(_ rename: AuthorRename, feed: String, in db: SQLiteDatabase) throws -> Bool {
        try db.run(Self.sql.rename(rename, inFeed: feed)) > 0
    }
}
