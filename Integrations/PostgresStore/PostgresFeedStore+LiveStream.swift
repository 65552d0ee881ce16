import Core
import Foundation
import StoreKit

/// What a live stream needs of the store beside pages: where it had got to, and an author's new handle.
extension PostgresFeedStore: StreamPositionReader, AuthorHandleWriter {
    public func streamPosition(ofFeed feed: String) throws -> String? {
        try run("reading the stream position of feed \(feed)", "SELECT stream_position FROM feeds WHERE name = $1", [feed]).first?[0] ?? nil
    }

    /// Behind the feed's lease, as a page is; the posts' copies of the handle follow the profile.
    public func setHandle(_ handle: String, ofAuthor author: UserID, at: Date, under lease: FeedLease) throws -> Bool {
        let feed = lease.feed
        return try fenced(lease, "recording the new handle of \(author.rawValue) in feed \(feed)") { db in
            let rename = Self.rename(AuthorRename(author: author, handle: handle, at: at), feed: feed)
            return try !db.query(rename.0, rename.1).isEmpty
        }
    }

    /// The statement that gives `feed`'s stored author the new handle, unless a newer profile is
    /// stored, and their posts' copies with it; one row when the handle changed. Run alone
    /// (``setHandle(_:ofAuthor:at:under:)``) or in a page's transaction (``FeedPage/renames``).
    static func rename(_ rename: AuthorRename, feed: String) -> PostgresConnection.Statement {
        ("""
            WITH renamed AS (
                UPDATE users SET handle = $3, profile_at = GREATEST(coalesce(profile_at, $4::bigint), $4::bigint)
                WHERE feed = $1 AND id = $2 AND handle IS DISTINCT FROM $3 AND coalesce(profile_at, $4::bigint) <= $4::bigint
                RETURNING pk),
            followed AS (
                UPDATE posts SET author_handle = $3 WHERE author_pk IN (SELECT pk FROM renamed) AND author_handle IS DISTINCT FROM $3)
            SELECT pk FROM renamed
            """, [feed, rename.author.rawValue, rename.handle, "\(StoredTime.milliseconds(rename.at))"])
    }
}
