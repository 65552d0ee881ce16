import Foundation

/// The part of the store that takes an author's new handle from a live stream (Bluesky's
/// `identity` event) without a post to carry it.
public protocol AuthorHandleWriter: Sendable {
    /// Gives the lease's feed's stored author `author` the handle `handle`, on the author's row and on
    /// every stored post of theirs (search sees it too), unless a post newer than `at` already
    /// carried a profile. An author the feed has not stored is left alone.
    ///
    /// - Returns: whether the stored handle changed.
    /// - Throws: ``ServiceError`` `.storage`; `.locked` when `lease` was lost meanwhile.
    func setHandle(_ handle: String, ofAuthor author: UserID, at: Date, under lease: FeedLease) async throws -> Bool
}
