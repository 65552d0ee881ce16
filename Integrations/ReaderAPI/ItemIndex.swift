import Core
import Foundation

/// Which post each item id names, learnt from every post served and, for an id it has not
/// met (after a restart), from one walk of the served feeds. A post's id is a hash, so the
/// walk is how an id is turned back into a post without a column in the store.
actor ItemIndex {
    struct Entry: Sendable {
        let feed: String
        let post: PostID
        let createdAt: Date
    }

    /// The most posts one walk reads.
    static let walkLimit = 2_000_000

    private var entries: [ItemID: Entry] = [:]
    private var lastWalk: ContinuousClock.Instant?

    /// Remembers the posts at `positions` under `ids`, their item ids in the same order (hashed by the caller,
    /// which writes them out too).
    func learn(_ positions: [StoredPost.ListingPosition], ids: [ItemID]) {
        entries.reserveCapacity(entries.count + positions.count)
        for (position, id) in zip(positions, ids) {
            entries[id] = Entry(feed: position.feed, post: position.id, createdAt: position.createdAt)
        }
    }

    /// The posts of `ids`, walking the feeds once (at most every 10 s) when one is not known.
    func resolve(_ ids: [ItemID], feeds: [String], store: any FeedReader) async throws -> [ItemID: Entry] {
        if ids.contains(where: { entries[$0] == nil }),
           lastWalk.map({ ContinuousClock.now - $0 > .seconds(10) }) ?? true {
            lastWalk = ContinuousClock.now
            var read = 0
            for feed in feeds {
                var after: StoredPost.Position?
                while read < Self.walkLimit {
                    let page = try await store.posts(matching: PostQuery(feed: feed, limit: 1_000, stable: true, after: after))
                    learn(page.map(\.listingPosition), ids: page.map { ItemID(feed: $0.feed, post: $0.post.id) })
                    read += page.count
                    guard page.count == 1_000, let last = page.last else { break }
                    after = last.position
                }
            }
        }
        var found: [ItemID: Entry] = [:]
        for id in ids { if let entry = entries[id] { found[id] = entry } }
        return found
    }
}
