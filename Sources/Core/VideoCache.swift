/// The store's role that remembers which of a feed's videos are resolved, so each is asked of
/// the video host once, and one the host could not resolve is asked again on a later sync.
public protocol VideoCache: Sendable {
    /// Of `ids`, the videos the store does not yet hold resolved, in the order given.
    func videosToResolve(among ids: [VideoID], inFeed feed: String) async throws -> [VideoID]

    /// Up to `limit` videos that earlier syncs could not resolve.
    func unresolvedVideoIDs(inFeed feed: String, limit: Int) async throws -> [VideoID]

    /// Stores videos of the lease's feed resolved outside a page (retries of earlier unresolved ones).
    /// - Returns: the rows written.
    /// - Throws: ``ServiceError`` `.locked` when `lease` was lost meanwhile.
    func saveVideos(_ videos: [Video], under lease: FeedLease) async throws -> Int
}
