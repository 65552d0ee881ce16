import Core
import Foundation
import Testing

/// What every store promises about the listing's positions alone (a reader app's list of item
/// ids): the posts' own positions, in the same order, under the same filters and bounds; and
/// about each feed's change counter (a served feed's `ETag`): it moves with every change to
/// what the feed shows, and with nothing else.
enum ListingPositionsContract {
    static func positionsAreThePostsOwnInTheSameOrder(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1", at: 1_700_000_000)), .upsert(makePost("p2", at: 1_700_000_100)),
                                             .upsert(makePost("p3", at: 1_700_000_100)), .upsert(makePost("p4", at: 1_700_000_200))],
                                            cursor: "1"), toFeed: "b")
        _ = try await store.commit(makePage([.upsert(makePost("p2", at: 1_700_000_100)), .upsert(makePost("p9", at: 1_700_000_050))],
                                            cursor: "1"), toFeed: "a")
        _ = try await store.setRead(true, postID: "p2", inFeed: "b")
        _ = try await store.setStarred(true, postID: "p9", inFeed: "a")
        let middle = StoredPost.ListingPosition(createdAt: Date(timeIntervalSince1970: 1_700_000_100), feed: "a", id: "p2")
        var oldest = PostQuery(limit: 3, continuing: middle)
        oldest.oldestFirst = true
        var bounded = PostQuery(limit: 10, since: Date(timeIntervalSince1970: 1_700_000_050))
        bounded.until = Date(timeIntervalSince1970: 1_700_000_100)
        let queries = [PostQuery(limit: 100), PostQuery(limit: 2), PostQuery(limit: 10, unreadOnly: true), PostQuery(limit: 10, starredOnly: true),
                       PostQuery(feed: "b", limit: 10), PostQuery(limit: 10, continuing: middle), PostQuery(feed: "b", limit: 2, continuing: middle),
                       oldest, bounded]
        for query in queries {
            let positions = try await other.positions(matching: query)
            let posts = try await other.posts(matching: query)
            #expect(!positions.isEmpty && positions == posts.map(\.listingPosition), "\(query)")
        }
        #expect(try await other.positions(matching: PostQuery(limit: 10, unreadOnly: true)).map { "\($0.feed)/\($0.id)" }
                == ["b/p4", "a/p2", "b/p3", "a/p9", "b/p1"])
        #expect(try await other.positions(matching: PostQuery(limit: 100)).first?.createdAt == Date(timeIntervalSince1970: 1_700_000_200))
    }

    static func aFeedsVersionMovesWithWhatItShowsAndNothingElse(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        func version(_ feed: String) async throws -> Int64 { try #require(try await other.feedVersions())[feed] ?? 0 }
        _ = try await store.commit(makePage([.upsert(makePost("p1")), .upsert(makePost("p2", at: 1_700_000_100))], cursor: "1"))
        _ = try await store.commit(makePage([.upsert(makePost("q1"))], cursor: "1"), toFeed: "away")
        var seen = try await version("home")
        let away = try await version("away")
        #expect(seen > 0 && away > 0)

        // Marks are not in a served feed: they leave it as it is.
        _ = try await store.setRead(true, postID: "p1", inFeed: "home")
        _ = try await store.setStarred(true, postID: "p2", inFeed: "home")
        #expect(try await version("home") == seen)

        // An edit, an author renamed, a post deleted, a purge: each moves the feed's counter alone.
        let changes: [(String, () async throws -> Void)] = [
            ("an edit", { _ = try await store.commit(makePage([.upsert(makePost("p2", text: "edited", at: 1_700_000_100))], cursor: "2")) }),
            ("a new post", { _ = try await store.commit(makePage([.upsert(makePost("p3", at: 1_700_000_200))], cursor: "3")) }),
            ("an author renamed", {
                var renamed = makePost("p4", at: 1_700_000_300)
                renamed.author = User(id: "u1", handle: "lovelace", displayName: "Countess Lovelace")
                _ = try await store.commit(makePage([.upsert(renamed)], cursor: "4"))
            }),
            ("a deletion", { _ = try await store.commit(makePage([.delete("p1")], cursor: "5")) }),
            ("a purge", { _ = try await other.purge(feed: "home") }),
        ]
        for (change, make) in changes {
            try await make()
            let now = try await version("home")
            #expect(now > seen, "\(change)")
            seen = now
        }
        #expect(try await version("away") == away, "another feed's changes leave it as it is")
    }
}

@Suite struct SQLiteListingPositionsContractTests {
    @Test func positionsAreThePostsOwnInTheSameOrder() async throws { try await ListingPositionsContract.positionsAreThePostsOwnInTheSameOrder(.sqlite) }
    @Test func aFeedsVersionMovesWithWhatItShowsAndNothingElse() async throws {
        try await ListingPositionsContract.aFeedsVersionMovesWithWhatItShowsAndNothingElse(.sqlite)
    }
}

@Suite(.needsPostgres) struct PostgresListingPositionsContractTests {
    @Test func positionsAreThePostsOwnInTheSameOrder() async throws { try await ListingPositionsContract.positionsAreThePostsOwnInTheSameOrder(.postgres) }
    @Test func aFeedsVersionMovesWithWhatItShowsAndNothingElse() async throws {
        try await ListingPositionsContract.aFeedsVersionMovesWithWhatItShowsAndNothingElse(.postgres)
    }
}
