import Core
import Foundation
import Testing

/// What every store promises about stars: local marks beside read marks, seen by another
/// connection, kept through every sync, and a filter in both listings.
enum StarContract {
    static func aStarIsSetSeenAndKeptThroughResyncs(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1")), .upsert(makePost("p2", at: 1_700_000_100))], cursor: "2"))
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "1"), toFeed: "away")

        #expect(try await store.setStarred(true, postID: "p1", inFeed: nil) == ["away", "home"], "two feeds hold p1: nothing starred")
        #expect(try await other.posts(matching: PostQuery(starredOnly: true)).isEmpty)
        #expect(try await store.setStarred(true, postID: "p2", inFeed: nil) == ["home"])
        #expect(try await store.setStarred(true, postID: "p1", inFeed: "home") == ["home"])
        #expect(try await store.setStarred(true, postID: "p-none", inFeed: nil) == [])
        let starred = try await other.posts(matching: PostQuery(starredOnly: true))
        #expect(starred.map { "\($0.feed)/\($0.post.id)" } == ["home/p2", "home/p1"])
        #expect(starred.allSatisfy { $0.isStarred && !$0.isRead }, "a star is not a read mark")

        // A resync that edits the post keeps its star; a read mark and a star live side by side.
        _ = try await store.commit(makePage([.upsert(makePost("p2", text: "edited", at: 1_700_000_100))], cursor: "3"))
        #expect(try await store.setRead(true, postID: "p2", inFeed: "home") == ["home"])
        let p2 = try #require(try await other.posts(matching: PostQuery(feed: "home", starredOnly: true)).first)
        #expect(p2.post.id == "p2" && p2.post.text == "edited" && p2.isStarred && p2.isRead)
        #expect(try await other.posts(matching: PostQuery(feed: "home", unreadOnly: true, starredOnly: true)).map(\.post.id) == ["p1"])
        #expect(try await other.posts(matching: PostQuery(feed: "home", starredOnly: true, stable: true)).map(\.post.id) == ["p2", "p1"])

        // Taking the star away leaves the read mark; unread leaves the star.
        #expect(try await store.setStarred(false, postID: "p2", inFeed: "home") == ["home"])
        #expect(try await store.setRead(false, postID: "p1", inFeed: "home") == ["home"])
        let home = try await other.posts(matching: PostQuery(feed: "home"))
        #expect(home.map { "\($0.post.id) \($0.isRead) \($0.isStarred)" } == ["p2 true false", "p1 false true"])
        #expect(try await other.posts(matching: PostQuery(feed: "away")).map(\.isStarred) == [false])
    }

    /// Starring twice keeps the first time, as a read mark does; a purge takes stars with the feed.
    static func aStarIsIdempotentAndGoesWithItsFeed(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "1"))
        #expect(try await store.setStarred(true, postID: "p1", inFeed: "home") == ["home"])
        #expect(try await store.setStarred(true, postID: "p1", inFeed: "home") == ["home"])
        #expect(try await store.setStarred(false, postID: "p1", inFeed: "home") == ["home"])
        #expect(try await store.setStarred(false, postID: "p1", inFeed: "home") == ["home"])
        #expect(try await other.posts(matching: PostQuery(starredOnly: true)).isEmpty)
        #expect(try await store.setStarred(true, postID: "p1", inFeed: "home") == ["home"])
        #expect(try await other.purge(feed: "home") == 1)
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "1"))
        #expect(try await other.posts(matching: PostQuery(starredOnly: true)).isEmpty, "a purged feed's stars went with it")
    }
}

@Suite struct SQLiteStarContractTests {
    @Test func aStarIsSetSeenAndKeptThroughResyncs() async throws { try await StarContract.aStarIsSetSeenAndKeptThroughResyncs(.sqlite) }
    @Test func aStarIsIdempotentAndGoesWithItsFeed() async throws { try await StarContract.aStarIsIdempotentAndGoesWithItsFeed(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresStarContractTests {
    @Test func aStarIsSetSeenAndKeptThroughResyncs() async throws { try await StarContract.aStarIsSetSeenAndKeptThroughResyncs(.postgres) }
    @Test func aStarIsIdempotentAndGoesWithItsFeed() async throws { try await StarContract.aStarIsIdempotentAndGoesWithItsFeed(.postgres) }
}
