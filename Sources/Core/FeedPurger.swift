/// The store's role that forgets a feed entirely, for `feedsync remove NAME --purge`.
public protocol FeedPurger: Sendable {
    /// Deletes everything the store keeps for `feed` (its posts and their search entries, authors,
    /// videos, read marks, sync runs and its cursor) in one transaction.
    ///
    /// - Returns: how many posts were deleted.
    /// - Throws: ``ServiceError`` `.locked` when another process is syncing the feed now.
    func purge(feed: String) async throws -> Int
}
