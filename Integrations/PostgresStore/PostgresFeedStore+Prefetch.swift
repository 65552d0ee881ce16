import Core
import Foundation
import StoreKit

/// What a daemon's sync reads first of its feed (the backend, the cursor, whether any video waits
/// to be resolved), read by the claim that took the lease, in the claim's own statement: three
/// round trips fewer per sync (issue 40). Good until the first write under that lease or its
/// release; only this worker writes the feed while it holds the lease.
struct ClaimPrefetch: Sendable {
    /// The lease the claim took: the reads ahead count only while this worker holds it.
    var token: String
    var backend: String?
    var cursor: FeedCursor?
    var hasUnresolvedVideos: Bool
}

extension PostgresFeedStore {
    /// What the claim read ahead for `feed`, while this worker still holds the lease it took.
    private func prefetch(_ feed: String) -> ClaimPrefetch? {
        guard let read = prefetched[feed], held[feed] == read.token else { return nil }
        return read
    }

    public func cursor(ofFeed feed: String) throws -> FeedCursor? {
        if let read = prefetch(feed) { return read.cursor }
        return try query("reading the cursor of feed \(feed)", Self.sql.cursor(ofFeed: feed)).first ?? nil
    }

    public func backend(ofFeed feed: String) throws -> String? {
        if let read = prefetch(feed) { return read.backend }
        return try query("reading the backend of feed \(feed)", Self.sql.backend(ofFeed: feed)).first ?? nil
    }

    public func unresolvedVideoIDs(inFeed feed: String, limit: Int) throws -> [VideoID] {
        if let read = prefetch(feed), !read.hasUnresolvedVideos { return [] }
        return try query("listing unresolved videos of feed \(feed)", Self.sql.unresolvedVideoIDs(inFeed: feed, limit: limit))
    }
}
