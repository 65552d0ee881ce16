import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import Testing

/// Posts' author keys are not foreign keys on PostgreSQL (migration 021: their per-row checks
/// were a large share of a cold sync's server time); the write path keeps them whole instead.
@Suite(.needsPostgres)
struct PostgresAuthorKeysTests {
    /// Posts whose author or sharer is not (yet) in `users`, in one feed and another holding the
    /// same user ids, authors renamed and replaced, then one feed purged: every key names a user
    /// row of the post's own feed with the post's own author (or sharer) id, throughout.
    @Test func everyAuthorKeyNamesItsFeedsUserAfterWritesRenamesAndAPurge() async throws {
        let (store, _) = try await makeWorkers()
        #expect(try await store.run("reading the constraints", """
            SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = 'posts'::regclass AND confrelid = 'users'::regclass
            """) == [["0"]], "migration 021 dropped the per-row checks")
        let ada = User(id: "u1", handle: "ada", displayName: "Ada"), grace = User(id: "u2", handle: "grace", displayName: "Grace")
        let at = Date(timeIntervalSince1970: 1_700_000_000)
        for feed in ["home", "work"] {
            _ = try await store.commit(makePage([
                .upsert(Post(id: "p1", author: ada, text: "one", createdAt: at)),
                .upsert(Post(id: "p2", author: grace, text: "two", createdAt: at, repost: Post.Repost(by: ada, originalID: "o2", at: at))),
            ], cursor: "1"), toFeed: feed)
        }
        try await expectWholeKeys(store, rows: 4)
        // p1 moves to another author; ada renamed; p2's sharer replaced.
        let renamed = User(id: "u1", handle: "ada2", displayName: "Ada L"), alan = User(id: "u3", handle: "alan", displayName: "Alan")
        _ = try await store.commit(makePage([
            .upsert(Post(id: "p1", author: grace, text: "one", createdAt: at)),
            .upsert(Post(id: "p3", author: renamed, text: "three", createdAt: at)),
            .upsert(Post(id: "p2", author: grace, text: "two", createdAt: at, repost: Post.Repost(by: alan, originalID: "o2", at: at))),
        ], cursor: "2"), toFeed: "home")
        try await expectWholeKeys(store, rows: 5)
        #expect(try await store.run("reading home's authors", """
            SELECT p.id, u.handle, r.handle FROM posts p JOIN users u ON u.pk = p.author_pk LEFT JOIN users r ON r.pk = p.repost_by_pk
            WHERE p.feed = 'home' ORDER BY p.id
            """) == [["p1", "grace", nil], ["p2", "grace", "alan"], ["p3", "ada2", nil]])
        #expect(try await store.purge(feed: "work") == 2)
        try await expectWholeKeys(store, rows: 3)
        #expect(try await store.run("counting users", "SELECT feed, count(*) FROM users GROUP BY feed") == [["home", "3"]])
    }

    /// `rows` posts, each with an `author_pk` (and a `repost_by_pk` where it is shared) naming a
    /// `users` row of its own feed whose id is the post's `author_id` (`repost_by`).
    private func expectWholeKeys(_ store: PostgresFeedStore, rows: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let answer = try await store.run("checking the author keys", """
            SELECT count(*),
                   count(*) FILTER (WHERE u.pk IS NULL OR u.feed <> p.feed OR u.id <> p.author_id),
                   count(*) FILTER (WHERE (p.repost_by IS NULL) <> (p.repost_by_pk IS NULL)
                                       OR (p.repost_by_pk IS NOT NULL AND (r.pk IS NULL OR r.feed <> p.feed OR r.id <> p.repost_by)))
            FROM posts p LEFT JOIN users u ON u.pk = p.author_pk LEFT JOIN users r ON r.pk = p.repost_by_pk
            """)
        #expect(answer == [["\(rows)", "0", "0"]], sourceLocation: sourceLocation)
    }
}
