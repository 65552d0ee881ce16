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
        let (feed, at) = (lease.feed, "\(StoredTime.milliseconds(at))")
        return try fenced(lease, "recording the new handle of \(author.rawValue) in feed \(feed)") { db in
            let renamed = try db.query("""
                UPDATE users SET handle = $3, profile_at = GREATEST(coalesce(profile_at, $4::bigint), $4::bigint)
                WHERE feed = $1 AND id = $2 AND handle IS DISTINCT FROM $3 AND coalesce(profile_at, $4::bigint) <= $4::bigint
                RETURNING pk
                """, [feed, author.rawValue, handle, at])
            guard let pk = renamed.first?[0] else { return false }
            try db.query("UPDATE posts SET author_handle = $2 WHERE author_pk = $1::bigint AND author_handle IS DISTINCT FROM $2", [pk, handle])
            return true
        }
    }
}
