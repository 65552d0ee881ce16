import Core
import Foundation
import Testing

/// Retention, the same on both stores: what `keep` removes, oldest first, in bounded batches,
/// keeping unread posts unless told, under the feed's lease.
enum RetentionContract {
    static let day: Double = 86_400
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A feed `home` of six posts, p0 (oldest, 6 days old) to p5 (1 day old), with p0, p1, p2
    /// and p4 read.
    static func storeHoldingSixPosts(_ kind: StoreKind) async throws -> any FeedStore {
        let (store, _) = try await makeStores(kind)
        let posts = (0..<6).map { makePost("p\($0)", at: now.timeIntervalSince1970 - Double(6 - $0) * day) }
        _ = try await store.commit(makePage(posts.map(FeedChange.upsert), cursor: "6"))
        for id in ["p0", "p1", "p2", "p4"] { _ = try await store.setRead(true, postID: PostID(id), inFeed: "home") }
        return store
    }

    static func stored(_ store: any FeedStore) async throws -> [String] {
        try await store.posts(matching: PostQuery(feed: "home", limit: 100)).map(\.post.id.rawValue).sorted()
    }

    static func byAgeReadPostsGoOldestFirstInBatchesAndUnreadOnesStay(_ kind: StoreKind) async throws {
        let store = try await storeHoldingSixPosts(kind)
        // Older than 3.5 days: p0, p1 and p2, all read.
        let keep = Retention(days: 3)
        let earlier = now.addingTimeInterval(-day / 2)
        #expect(try await underLease(store) { try await store.prune(keep, now: earlier, limit: 2, under: $0) } == 2)
        #expect(try await stored(store) == ["p2", "p3", "p4", "p5"], "the oldest two first")
        #expect(try await underLease(store) { try await store.prune(keep, now: earlier, limit: 2, under: $0) } == 1)
        #expect(try await stored(store) == ["p3", "p4", "p5"])
        // Older than 2.5 days: p3 too, which is unread.
        let later = now.addingTimeInterval(day / 2)
        #expect(try await underLease(store) { try await store.prune(keep, now: later, limit: 10, under: $0) } == 0, "p3 is unread")
        #expect(try await underLease(store) { try await store.prune(Retention(days: 3, evenUnread: true), now: later, limit: 10, under: $0) } == 1)
        #expect(try await stored(store) == ["p4", "p5"])
        let status = try #require(try await store.feedStatuses().first { $0.feed == "home" })
        #expect(status.prunedPosts == 4 && status.prunedAt == later, "status counts what retention removed, and when it last did")
    }

    static func byCountOnlyTheNewestStayAndUnreadOnesAreKeptBeyondIt(_ kind: StoreKind) async throws {
        let store = try await storeHoldingSixPosts(kind)
        #expect(try await underLease(store) { try await store.prune(Retention(posts: 2), now: now, limit: 10, under: $0) } == 3)
        #expect(try await stored(store) == ["p3", "p4", "p5"], "p0–p2 read and beyond the newest two; p3 unread stays")
        #expect(try await underLease(store) { try await store.prune(Retention(posts: 1, evenUnread: true), now: now, limit: 10, under: $0) } == 2)
        #expect(try await stored(store) == ["p5"])
        #expect(try await underLease(store) { try await store.prune(Retention(posts: 1), now: now, limit: 10, under: $0) } == 0)
    }

    static func starredPostsStayWhateverTheirAgeRankOrReadMark(_ kind: StoreKind) async throws {
        let store = try await storeHoldingSixPosts(kind)
        // p0 is read and the oldest, p3 unread: both starred, both stay even with evenUnread.
        for id in ["p0", "p3"] { _ = try await store.setStarred(true, postID: PostID(id), inFeed: "home") }
        #expect(try await underLease(store) { try await store.prune(Retention(days: 1, posts: 1, evenUnread: true), now: now, limit: 10, under: $0) } == 3)
        #expect(try await stored(store) == ["p0", "p3", "p5"], "the starred two and the newest one")
        _ = try await store.setStarred(false, postID: PostID("p0"), inFeed: "home")
        #expect(try await underLease(store) { try await store.prune(Retention(posts: 1), now: now, limit: 10, under: $0) } == 1)
        #expect(try await stored(store) == ["p3", "p5"], "p0 unstarred and read goes")
    }
}

@Suite struct SQLiteRetentionContractTests {
    @Test func byAge() async throws { try await RetentionContract.byAgeReadPostsGoOldestFirstInBatchesAndUnreadOnesStay(.sqlite) }
    @Test func byCount() async throws { try await RetentionContract.byCountOnlyTheNewestStayAndUnreadOnesAreKeptBeyondIt(.sqlite) }
    @Test func starred() async throws { try await RetentionContract.starredPostsStayWhateverTheirAgeRankOrReadMark(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresRetentionContractTests {
    @Test func byAge() async throws { try await RetentionContract.byAgeReadPostsGoOldestFirstInBatchesAndUnreadOnesStay(.postgres) }
    @Test func byCount() async throws { try await RetentionContract.byCountOnlyTheNewestStayAndUnreadOnesAreKeptBeyondIt(.postgres) }
    @Test func starred() async throws { try await RetentionContract.starredPostsStayWhateverTheirAgeRankOrReadMark(.postgres) }
}
