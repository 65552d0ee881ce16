import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import Testing

/// Posts' video links are not foreign keys on PostgreSQL (migration 023: their per-row checks and
/// row locks were a tenth of a cold sync's server time); a deleted post's links go with it by a
/// trigger, whoever deletes it.
@Suite(.needsPostgres)
struct PostgresVideoLinksTests {
    /// Posts with videos in two feeds, then deleted by a page, by retention and by a purge: every
    /// link names a stored post and a stored video, and the posts left keep theirs.
    @Test func aPostsVideoLinksGoWithItWhoeverDeletesIt() async throws {
        let (store, _) = try await makeWorkers()
        #expect(try await store.run("reading the constraints", """
            SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = 'post_videos'::regclass
            """) == [["0"]], "migration 023 dropped the per-row checks")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let ada = User(id: "u1", handle: "ada", displayName: "Ada")
        func post(_ index: Int, daysAgo: Int) -> FeedChange {
            .upsert(Post(id: PostID("p\(index)"), author: ada, text: "post \(index)",
                         createdAt: now.addingTimeInterval(-Double(daysAgo) * 86_400), videoIDs: [VideoID("v\(index)"), "shared"]))
        }
        _ = try await store.commit(makePage((0 ..< 6).map { post($0, daysAgo: 6 - $0) }, cursor: "6"), toFeed: "home")
        _ = try await store.commit(makePage((0 ..< 2).map { post($0, daysAgo: 1) }, cursor: "2"), toFeed: "work")
        try await expectWholeLinks(store, ["home": 12, "work": 4])

        _ = try await store.commit(makePage([.delete("p5")], cursor: "7"), toFeed: "home")
        try await expectWholeLinks(store, ["home": 10, "work": 4])

        // The newest two of home's five stay: p3 and p4.
        #expect(try await underLease(store) { try await store.prune(Retention(posts: 2, evenUnread: true), now: now, limit: 10, under: $0) } == 3)
        try await expectWholeLinks(store, ["home": 4, "work": 4])
        #expect(try await store.run("reading home's links", """
            SELECT p.id, v.id FROM post_videos l JOIN posts p ON p.pk = l.post_pk JOIN videos v ON v.pk = l.video_pk
            WHERE p.feed = 'home' ORDER BY p.id, l.position
            """) == [["p3", "v3"], ["p3", "shared"], ["p4", "v4"], ["p4", "shared"]])

        #expect(try await store.purge(feed: "work") == 2)
        try await expectWholeLinks(store, ["home": 4])
    }

    /// The links by feed, and none naming a post or video that is not stored.
    private func expectWholeLinks(_ store: PostgresFeedStore, _ byFeed: [String: Int],
                                 sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let links = try await store.run("counting the links", """
            SELECT p.feed, count(*) FROM post_videos l JOIN posts p ON p.pk = l.post_pk GROUP BY p.feed
            """)
        #expect(Dictionary(uniqueKeysWithValues: links.map { ($0[0] ?? "", Int($0[1] ?? "") ?? -1) }) == byFeed,
                sourceLocation: sourceLocation)
        #expect(try await store.run("finding dangling links", """
            SELECT count(*) FILTER (WHERE p.pk IS NULL), count(*) FILTER (WHERE v.pk IS NULL)
            FROM post_videos l LEFT JOIN posts p ON p.pk = l.post_pk LEFT JOIN videos v ON v.pk = l.video_pk
            """) == [["0", "0"]], sourceLocation: sourceLocation)
    }
}
