/// The store's role that keeps a feed's mirror to what its backend lists: which backend the
/// mirror came from (a feed that swapped backends is walked from the start), and, after a walk
/// from the start, the cached posts the walk did not see.
public protocol FeedSweeper: Sendable {
    /// The identity of the backend the feed's cursor and posts came from (``FeedBackend/identity``);
    /// `nil` before its first sync.
    func backend(ofFeed feed: String) async throws -> String?

    /// Records the backend the lease's feed now mirrors, once a sync of it has completed.
    /// - Throws: ``ServiceError`` `.locked` when `lease` was lost meanwhile.
    func setBackend(_ backend: String, under lease: FeedLease) async throws

    /// How many cached posts of the walk's feed the walk has not seen, of how many cached.
    func unseenPosts(of walk: FullWalk) async throws -> (unseen: Int, cached: Int)

    /// Deletes the cached posts of the walk's feed that the walk has not seen, in one transaction,
    /// under the lease the walk was made under.
    /// - Returns: the posts deleted.
    /// - Throws: ``ServiceError`` `.locked` when `lease` was lost meanwhile (nothing is deleted).
    func deleteUnseenPosts(of walk: FullWalk, under lease: FeedLease) async throws -> Int
}
