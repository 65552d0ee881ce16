import Core
import Foundation
import StoreKit

/// What a live stream needs of the store beside pages: where it had got to, and an author's new handle.
extension PostgresFeedStore: StreamPositionReader {
    public func streamPosition(ofFeed feed: String) throws -> String? {
        try run("reading the stream position of feed \(feed)", "SELECT stream_position FROM feeds WHERE name = $1", [feed]).first?[0] ?? nil
    }

    /// The statement that gives `feed`'s stored author the new handle, unless a newer profile is
    /// stored, and their posts' copies with it, in a page's transaction (``FeedPage/renames``);
    /// one row when the handle changed.
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
