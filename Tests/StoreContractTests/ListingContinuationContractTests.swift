import Core
import Foundation
import Testing

/// What every store promises about continuing the newest-first listing after a post (a reader
/// app's continuation): pages meet without a gap or an overlap, ties included, filters held;
/// and the same of the oldest-first listing, its exact reverse, with an upper time bound.
enum ListingContinuationContract {
    static func pagesMeetWithoutAGapOrAnOverlap(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        // Three posts share one instant across two feeds: the ties are ordered by feed, then id.
        _ = try await store.commit(makePage([.upsert(makePost("p1", at: 1_700_000_000)), .upsert(makePost("p2", at: 1_700_000_100)),
                                             .upsert(makePost("p3", at: 1_700_000_100)), .upsert(makePost("p4", at: 1_700_000_200))],
                                            cursor: "1"), toFeed: "b")
        _ = try await store.commit(makePage([.upsert(makePost("p2", at: 1_700_000_100)), .upsert(makePost("p9", at: 1_700_000_050))],
                                            cursor: "1"), toFeed: "a")
        let whole = try await other.posts(matching: PostQuery(limit: 100)).map { "\($0.feed)/\($0.post.id)" }
        #expect(whole == ["b/p4", "a/p2", "b/p2", "b/p3", "a/p9", "b/p1"])
        for size in 1...4 {
            var walked: [String] = []
            var continuing: StoredPost.ListingPosition?
            for _ in 0..<10 {
                let page = try await other.posts(matching: PostQuery(limit: size, continuing: continuing))
                walked += page.map { "\($0.feed)/\($0.post.id)" }
                guard let last = page.last, page.count == size else { break }
                continuing = last.listingPosition
            }
            #expect(walked == whole, "pages of \(size)")
        }
        _ = try await store.setRead(true, postID: "p2", inFeed: "b")
        let after = StoredPost.ListingPosition(createdAt: Date(timeIntervalSince1970: 1_700_000_100), feed: "a", id: "p2")
        #expect(try await other.posts(matching: PostQuery(limit: 10, unreadOnly: true, continuing: after)).map(\.post.id) == ["p3", "p9", "p1"])
        #expect(try await other.posts(matching: PostQuery(feed: "b", limit: 10, continuing: after)).map(\.post.id) == ["p2", "p3", "p1"])

        // Oldest first is the exact reverse, paged the same way; `until` bounds it from above.
        for size in 1...4 {
            var walked: [String] = []
            var continuing: StoredPost.ListingPosition?
            for _ in 0..<10 {
                var query = PostQuery(limit: size, continuing: continuing)
                query.oldestFirst = true
                let page = try await other.posts(matching: query)
                walked += page.map { "\($0.feed)/\($0.post.id)" }
                guard let last = page.last, page.count == size else { break }
                continuing = last.listingPosition
            }
            #expect(walked == whole.reversed(), "oldest first, pages of \(size)")
        }
        var bounded = PostQuery(limit: 10, since: Date(timeIntervalSince1970: 1_700_000_050))
        bounded.until = Date(timeIntervalSince1970: 1_700_000_100)
        #expect(try await other.posts(matching: bounded).map { "\($0.feed)/\($0.post.id)" } == ["a/p2", "b/p2", "b/p3", "a/p9"])
        bounded.oldestFirst = true
        bounded.continuing = StoredPost.ListingPosition(createdAt: Date(timeIntervalSince1970: 1_700_000_100), feed: "b", id: "p3")
        #expect(try await other.posts(matching: bounded).map { "\($0.feed)/\($0.post.id)" } == ["b/p2", "a/p2"])
    }
}

@Suite struct SQLiteListingContinuationContractTests {
    @Test func pagesMeetWithoutAGapOrAnOverlap() async throws { try await ListingContinuationContract.pagesMeetWithoutAGapOrAnOverlap(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresListingContinuationContractTests {
    @Test func pagesMeetWithoutAGapOrAnOverlap() async throws { try await ListingContinuationContract.pagesMeetWithoutAGapOrAnOverlap(.postgres) }
}
