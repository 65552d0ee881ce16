import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import StoreKit
import Testing

/// A page's transaction costs a fixed number of round trips to the server, and its pipelines keep
/// the fence: nothing commits unless the lease is still this worker's.
@Suite(.needsPostgres)
struct PostgresPageRoundTripTests {
    /// Posts by two authors, one reposted by a third, with videos, an edit of a stored post, a
    /// deletion and resolved videos: every statement a page can need.
    @Test func aShortPageCostsTwoRoundTripsWhateverItHolds() async throws {
        let (store, _) = try await makeWorkers()
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        _ = try await store.apply(makePage([.upsert(makePost("old")), .upsert(makePost("gone"))], cursor: "1"),
                                  videos: [], under: lease)
        let grace = User(id: "u2", handle: "grace", displayName: "Grace"), alan = User(id: "u3", handle: "alan", displayName: "Alan")
        let at = Date(timeIntervalSince1970: 1_700_000_100)
        let posts = [
            Post(id: "p1", author: grace, text: "one", createdAt: at, videoIDs: ["v1", "v2"]),
            Post(id: "p2", author: grace, text: "two", createdAt: at, repost: Post.Repost(by: alan, originalID: "o2", at: at)),
            Post(id: "old", author: grace, text: "edited", createdAt: at, videoIDs: ["v2"]),
        ]
        let video = Video(id: "v1", title: "V", duration: 1, streamURL: URL(string: "https://example.com/v1.mp4")!)
        let page = store.prepare(makePage(posts.map { .upsert($0) } + [.delete("gone")], cursor: "2"))
        let backend = try await store.run("naming the backend", "SELECT pg_backend_pid()")
        let result = try await store.apply(page, videos: [video], under: lease, announcing: nil)
        // BEGIN with the lease, videos, authors and the posts' upsert (a short page's posts are
        // one parameter); the links, deletion, resolved videos and cursor with COMMIT. It was 14,
        // one per statement, then 5 with COPY into a staging table.
        #expect(await store.lastPageRoundTripsForTests == 2)
        #expect((result.inserted, result.updated, result.deleted) == (2, 1, 1))
        #expect(try await store.run("naming the backend", "SELECT pg_backend_pid()") == backend, "the pipelines left the connection usable")
        #expect(try await store.cursor(ofFeed: "home")?.position == "2")
        let links = try await store.run("reading the links", """
            SELECT p.id, v.id, v.resolved FROM post_videos l JOIN posts p ON p.pk = l.post_pk JOIN videos v ON v.pk = l.video_pk
            ORDER BY p.id, l.position
            """).map { $0.compactMap { $0 } }
        #expect(links == [["old", "v2", "0"], ["p1", "v1", "1"], ["p1", "v2", "0"]])
        #expect(try await store.posts(matching: PostQuery(feed: "home")).map(\.post.id).sorted() == ["old", "p1", "p2"])
    }

    /// A page longer than ``PostgresPreparedPage/jsonLimit`` goes through COPY and the staging
    /// table: five round trips, and the same rows as the short pages' path writes.
    @Test func aLongPageGoesThroughCopyInFiveRoundTripsAndStoresWhatTheShortPathStores() async throws {
        let (store, _) = try await makeWorkers()
        let grace = User(id: "u2", handle: "grace", displayName: "Grace"), alan = User(id: "u3", handle: "alan", displayName: "Alan")
        let awkward = ["tab\there", "line\nbreak\r", "back\\slash \\N", "nul\u{0}byte", "quote \" and ' both", "é ✨ 🚀", "{\"json\": [1]}", ""]
        var posts: [Post] = []
        for index in 0 ..< PostgresPreparedPage.jsonLimit + 1 {
            let text: String = awkward[index % awkward.count] + " \(index)"
            let edited: Date? = index % 2 == 0 ? nil : Date(timeIntervalSince1970: 1_700_000_500)
            let counts = Post.Counts(replies: index, reposts: Int(Int32.max) + index, likes: 0)
            let videos: [VideoID] = index % 5 == 0 ? [VideoID("v\(index)")] : []
            let warning: String? = index % 4 == 0 ? awkward[(index + 1) % awkward.count] : nil
            let repost: Post.Repost? = index % 7 == 0 ? Post.Repost(by: alan, originalID: PostID("o\(index)"), at: nil) : nil
            posts.append(Post(id: PostID("p\(index)"), author: index % 3 == 0 ? alan : grace, text: text,
                              createdAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), editedAt: edited,
                              counts: counts, videoIDs: videos, contentWarning: warning, repost: repost))
        }
        let changes: [FeedChange] = posts.map { FeedChange.upsert($0) }
        let long = store.prepare(makePage(changes, cursor: "1"))
        guard case .copy = long.posts else { Issue.record("a long page goes through COPY"); return }
        var pages: [(String, PostgresPreparedPage)] = [("long", long)]
        for start in stride(from: 0, to: changes.count, by: 20) {
            pages.append(("short", store.prepare(makePage(Array(changes[start ..< min(start + 20, changes.count)]), cursor: "\(start)"))))
        }
        for (feed, prepared) in pages {
            let lease = try #require(try await store.acquireLease(onFeed: feed, holder: "feedsyncd", wait: 0, onlyIfDue: false))
            let result = try await store.apply(prepared, videos: [], under: lease, announcing: nil)
            #expect(await store.lastPageRoundTripsForTests == (feed == "long" ? 5 : 2))
            #expect(result.inserted == prepared.upsertCount)
            await store.release(lease)
        }
        let columns = (PostColumns.names + ["author_handle", "author_name", "created", "search"]).joined(separator: ", ")
        let copied = try await store.run("reading", "SELECT \(columns) FROM posts WHERE feed = 'long' ORDER BY id")
        let passed = try await store.run("reading", "SELECT \(columns) FROM posts WHERE feed = 'short' ORDER BY id")
        #expect(copied.count == posts.count)
        #expect(copied == passed, "both paths store the same rows")
        #expect(try await store.posts(matching: PostQuery(feed: "short", limit: 100)).map(\.post.text).sorted()
                == posts.map { $0.text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") }.sorted())
    }

    /// After a long page of only new posts, the next is inserted without the upsert's conflict
    /// check. When it holds a post the feed has after all, the savepoint takes the insert back and
    /// the page is upserted, in the same transaction as the pages before it, which stay.
    @Test func aLongPageAfterNewOnesIsInsertedAndUpsertedWhenItMeetsAStoredPost() async throws {
        let (store, _) = try await makeWorkers()
        let size = PostgresPreparedPage.jsonLimit + 1
        func page(_ ids: Range<Int>, edited: Set<Int> = [], cursor: String) -> PostgresPreparedPage {
            store.prepare(makePage(ids.map { .upsert(makePost("p\($0)", text: edited.contains($0) ? "edited \($0)" : "post \($0)")) },
                                   cursor: cursor))
        }
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        await store.recordStatementsForTests()
        // One transaction: two pages of new posts, then one that edits a post of the first.
        let pages = [page(0 ..< size, cursor: "1"), page(size ..< 2 * size, cursor: "2"),
                     page(2 * size - 1 ..< 3 * size - 1, edited: [2 * size - 1], cursor: "3")]
        let results = try await store.apply(pages.map { ($0, []) }, under: lease, announcing: nil)
        #expect(results.map(\.inserted) == [size, size, size - 1])
        #expect(results.map(\.updated) == [0, 0, 1])
        #expect(results[2].updatedIDs == [PostID("p\(2 * size - 1)")])
        let sent = await store.statementsSentForTests
        #expect(sent.filter { $0.hasPrefix("SAVEPOINT") }.count == 2, "the second and third pages were tried as inserts")
        #expect(sent.filter { $0.hasPrefix("ROLLBACK TO") }.count == 1, "the third met a stored post")
        #expect(try await store.run("counting", "SELECT count(*), count(*) FILTER (WHERE text LIKE 'edited%') FROM posts")
                    .first == ["\(3 * size - 1)", "1"])
        #expect(try await store.cursor(ofFeed: "home")?.position == "3")
        // The third page was not all new, so the fourth is upserted from the start, and its stored post changes nothing.
        await store.recordStatementsForTests()
        let fourth = try await store.apply(page(3 * size - 2 ..< 4 * size - 2, cursor: "4"), videos: [], under: lease, announcing: nil)
        #expect((fourth.inserted, fourth.unchanged) == (size - 1, 1))
        #expect(await store.lastPageRoundTripsForTests == 5)
        #expect(!(await store.statementsSentForTests).contains { $0.hasPrefix("SAVEPOINT") })
        #expect(try await store.run("searching", "SELECT count(*) FROM posts WHERE search @@ to_tsquery('simple', 'edited')").first == ["1"])
        await store.release(lease)
    }

    /// Ids and video ids travel as array literals (``pgArray(_:)``): every value comes back as it
    /// was, whatever it holds.
    @Test func anArrayLiteralCarriesEveryValueAsItIs() async throws {
        let (store, _) = try await makeWorkers()
        let values = ["plain", "", "NULL", "null", "with space", " padded ", "comma,inside", "{braces}", "quote\"d", "back\\slash",
                      "\\\"", "\"\"", "tab\tand\nline", "é ✨ 東京", "at:tag/x?y=1", String(repeating: "\\\"x", count: 50)]
        let answer = try await store.run("reading the array", "SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS a(v, n) ORDER BY n",
                                         [pgArray(values)])
        #expect(answer == values.map { [$0] })
        #expect(try await store.run("reading an empty array", "SELECT cardinality($1::text[])", [pgArray([])]) == [["0"]])
    }

    /// The lease was taken over while this worker still holds its token (it stalled): the page's
    /// first pipeline finds the lease gone, COMMIT is never sent, and the connection goes on.
    @Test func aPageWhoseLeaseWasTakenOverCommitsNothingAndTheConnectionGoesOn() async throws {
        let (store, other) = try await makeWorkers()
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        try await other.run("taking the lease over", "UPDATE feed_leases SET token = 'another worker' WHERE feed = 'home'")
        let page = makePage([.upsert(Post(id: "p1", author: User(id: "u2", handle: "grace", displayName: "Grace"), text: "one",
                                          createdAt: Date(timeIntervalSince1970: 1_700_000_000), videoIDs: ["v1"]))], cursor: "1")
        let backend = try await store.run("naming the backend", "SELECT pg_backend_pid()")
        let error = await #expect(throws: ServiceError.self) { try await store.apply(store.prepare(page), videos: [], under: lease, announcing: nil) }
        #expect(error?.code == .locked)
        #expect(try await store.run("naming the backend", "SELECT pg_backend_pid()") == backend)
        #expect(try await store.cursor(ofFeed: "home") == nil, "the same connection answers, outside any transaction")
        #expect(try await store.run("checking", "SELECT count(*) FROM users UNION ALL SELECT count(*) FROM videos")
                    .map { $0[0] } == ["0", "0"], "the statements sent with the renewal were rolled back")
        #expect(try await other.posts(matching: PostQuery(feed: "home")).isEmpty)
    }
}

/// The claims' and pages' statements are planned once per session, not at every run (a custom
/// plan each time was a quarter of the server's time in the full cluster run of issue 40).
@Suite(.needsPostgres) struct PostgresGenericPlanTests {
    @Test func claimsAndPagesRunOnePlanPerSession() async throws {
        let (store, _) = try await makeWorkers()
        for n in 0..<8 {
            let lease = try #require(try await store.acquireLease(onFeed: "feed\(n)", holder: "feedsyncd", wait: 0, onlyIfDue: false))
            _ = try await store.apply(makePage([.upsert(makePost("p\(n)"))], cursor: "\(n)"), videos: [], under: lease)
            await store.release(lease)
        }
        // This session's prepared statements, as the server counts their plans (PostgreSQL 14+).
        let plans = try await store.run("reading the session's plans", """
            SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
            WHERE statement LIKE '%FROM feed_leases l LEFT JOIN feeds f%' OR statement LIKE 'UPDATE feed_leases SET holder%'
               OR statement LIKE 'INSERT INTO posts%'
            """)
        #expect(plans.count == 3, "\(plans)")
        for row in plans {
            #expect(row[2] == "0" && (Int(row[1] ?? "") ?? 0) >= 7, "planned at each run: \(row)")
        }
    }
}

/// A page finds its authors and its videos by key, on both of its paths (a short page's JSON,
/// a long page's COPY). A session plans a page's statements once,
/// generically, for the average feed: in a store of many small feeds, a join then read every
/// user and every video of a large feed for each of its pages.
@Suite(.needsPostgres) struct PostgresKeyLookupPlanTests {
    @Test func aLargeFeedAmongSmallOnesFindsItsAuthorsAndVideosByKey() async throws {
        let (store, _) = try await makeWorkers()
        // 3,000 authors and videos in the feed `home`, one each in 3,000 other feeds.
        for (table, columns, values) in [("users", "feed, id, handle, display_name", "'u' || n, 'h' || n, 'n' || n"),
                                         ("videos", "feed, id", "'v' || n")] {
            try await store.run("filling \(table)", """
                INSERT INTO \(table) (\(columns)) SELECT 'home', \(values) FROM generate_series(1, 3000) n
                UNION ALL SELECT 'small' || n, \(values) FROM generate_series(1, 3000) n
                """)
            try await store.run("counting \(table)", "ANALYZE \(table)")
        }
        try await store.run("planning generically", "SET plan_cache_mode = force_generic_plan")
        try await store.run("making the staging table", PostColumns.stagingTable)
        let statements = [("posts", PostgresFeedStore.upsertPostsFromJSON, "text, jsonb", "'home', '[]'"),
                          ("copied", PostgresFeedStore.upsertPosts, "text", "'home'"),
                          ("inserted", PostgresFeedStore.insertStagedPosts, "text", "'home'"),
                          ("links", PostgresFeedStore.linkVideos, "bigint[], int[], text[], text", "'{1}', '{0}', '{v7}', 'home'")]
        for (name, sql, types, values) in statements {
            try await store.run("preparing \(name)", "PREPARE probe_\(name) (\(types)) AS \(sql)")
            let plan = try await store.run("planning \(name)", "EXPLAIN EXECUTE probe_\(name) (\(values))").compactMap { $0.first ?? nil }
            let shown = "\(name):\n" + plan.joined(separator: "\n")
            #expect(plan.contains { $0.contains("on users") || $0.contains("on videos") }, "\(shown)")
            #expect(!plan.contains { $0.contains("Seq Scan on users") || $0.contains("Seq Scan on videos") }, "\(shown)")
            // A hash of the page's own rows (the COPY path joins its posts to its authors so) is
            // fine; a hash of the feed's users or videos is what this guards against.
            for (line, next) in zip(plan, plan.dropFirst()) where line.contains("->  Hash  ") {
                #expect(!next.contains("on users") && !next.contains("on videos"), "hashes a table: \(shown)")
            }
            for condition in plan where condition.contains("Index Cond") && condition.contains("feed =") {
                #expect(condition.contains("id ="), "reads the feed's rows, not one key: \(shown)")
            }
        }
    }
}
