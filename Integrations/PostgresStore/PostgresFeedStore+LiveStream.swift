import Core
import Foundation
import StoreKit

/// What a live stream needs of the store beside pages: an author's new handle, in the page's
/// transaction. Where the stream had got to is ``SQLStore``'s `streamPosition(ofFeed:)`.
extension PostgresFeedStore: StreamPositionReader {
    /// The statement that gives `feed`'s stored author the new handle unless a newer profile is
    /// stored, in a page's transaction (``FeedPage/renames``); one row when the handle changed.
    /// The `users_au_profile` trigger carries the handle to the author's posts and their search.
    static func rename(_ rename: AuthorRename, feed: String) -> PostgresConnection.Statement {
        sql.rename(rename, inFeed: feed).pipelined
    }
}

/// The roles ``SQLStore`` plays for this store whole.
extension PostgresFeedStore: SyncRecorder, ReadMarker, LiveStateRecorder {}
