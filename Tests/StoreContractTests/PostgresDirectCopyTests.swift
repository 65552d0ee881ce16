import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import StoreKit
import Testing

/// A first walk's long page of new posts is copied straight into `posts` (``PostgresDirectRows``):
/// what it stores is what the staged upsert and the short pages' path store.
@Suite(.needsPostgres)
struct PostgresDirectCopyTests {
    private let ada = User(id: "u1", handle: "ada", displayName: "Ada Lovelace")
    private let alan = User(id: "u3", handle: "alan", displayName: "Alan Turing")

    /// Two long pages: the first has only new posts, so the second is copied. Its posts repeat
    /// words, share words with their authors' names, have titles, warnings, videos and sharers,
    /// and one has no words at all; `renamed` writes half of them.
    private func pages(renamed: User) -> [[FeedChange]] {
        let size = PostgresPreparedPage.jsonLimit + 6
        let texts = ["ada ada lovelace wrote notes", "", "turing machine, turing test.", "café ÉTÉ 東京 ✨ 42", "Alan met Ada at the lab"]
        func post(_ index: Int, author: User, at seconds: Double) -> FeedChange {
            .upsert(Post(id: PostID("p\(index)"), author: author, text: texts[index % texts.count],
                         createdAt: Date(timeIntervalSince1970: seconds + Double(index)),
                         videoIDs: index % 4 == 0 ? [VideoID("v\(index % 9)"), VideoID("v\((index + 1) % 9)")] : [],
                         contentWarning: index % 3 == 0 ? "cw ada" : nil,
                         repost: index % 7 == 0 ? Post.Repost(by: alan, originalID: PostID("o\(index)"), at: nil) : nil,
                         title: index % 5 == 0 ? "Title Turing" : nil))
        }
        return [(0 ..< size).map { post($0, author: $0 % 2 == 0 ? ada : alan, at: 1_700_000_000) },
                (size ..< 2 * size).map { post($0, author: $0 % 2 == 0 ? renamed : alan, at: 1_600_000_000) }]
    }

    private static let columns = (PostColumns.names + ["author_handle", "author_name", "created", "search",
                                                       "(SELECT id FROM users u WHERE u.pk = author_pk)",
                                                       "(SELECT id FROM users u WHERE u.pk = repost_by_pk)"]).joined(separator: ", ")

    private func rows(_ store: PostgresFeedStore, feed: String) async throws -> [[String?]] {
        try await store.run("reading", "SELECT \(Self.columns) FROM posts WHERE feed = $1 ORDER BY posts.id", [feed])
    }

    private func links(_ store: PostgresFeedStore, feed: String) async throws -> [[String?]] {
        try await store.run("reading the links", """
            SELECT p.id, l.position::text, v.id FROM post_videos l JOIN posts p ON p.pk = l.post_pk JOIN videos v ON v.pk = l.video_pk
            WHERE p.feed = $1 ORDER BY p.id, l.position
            """, [feed])
    }

    /// With the authors' stored profiles the page's own (its rows as prepared, their keys filled
    /// in), and with one stored newer than the page's (its rows encoded again with it).
    @Test(arguments: [false, true])
    func aFirstWalksPageIsCopiedAndStoresWhatTheOtherPathsStore(olderProfile: Bool) async throws {
        let (store, _) = try await makeWorkers()
        let pages = pages(renamed: olderProfile ? User(id: "u1", handle: "countess", displayName: "Augusta King") : ada)
        let lease = try #require(try await store.acquireLease(onFeed: "long", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        let first = try await store.apply(store.prepare(makePage(pages[0], cursor: "1")), videos: [], under: lease, announcing: nil)
        #expect(first.inserted == pages[0].count)
        await store.recordStatementsForTests()
        let prepared = store.prepare(makePage(pages[1], cursor: "2"))
        #expect(prepared.direct != nil)
        let second = try await store.apply(prepared, videos: [], under: lease, announcing: nil)
        #expect((second.inserted, second.updated, second.unchanged) == (pages[1].count, 0, 0))
        #expect(Set(second.insertedIDs) == Set(pages[1].compactMap { if case .upsert(let post) = $0 { post.id } else { nil } }))
        #expect(await store.statementsSentForTests.contains { $0.hasPrefix("COPY posts") }, "the second page was copied straight in")
        // The first pipeline, the copy (two) and the last pipeline.
        #expect(await store.lastPageRoundTripsForTests == 4)
        await store.release(lease)
        // The same posts through short pages' JSON, in the same order.
        let short = try #require(try await store.acquireLease(onFeed: "short", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        for (index, changes) in (pages[0] + pages[1]).chunked(into: 20).enumerated() {
            _ = try await store.apply(store.prepare(makePage(changes, cursor: "\(index)")), videos: [], under: short, announcing: nil)
        }
        await store.release(short)
        let copied = try await rows(store, feed: "long"), passed = try await rows(store, feed: "short")
        #expect(copied.count == 2 * pages[0].count && passed.count == copied.count)
        let differing = zip(copied, passed).filter { $0 != $1 }.map { $0.0 }
        #expect(differing.isEmpty, "both paths store the same rows; these differ: \(differing.prefix(3))")
        #expect(try await links(store, feed: "long") == links(store, feed: "short"))
        #expect(try await store.run("reading an author's posts", """
            SELECT count(*) FROM posts WHERE feed = 'long' AND author_handle = 'ada' AND search @@ to_tsquery('simple', 'lovelace & ada')
            """) == [["\(pages[0].count / 2 + pages[1].count / 2)"]], "the stored, newer profile names the older page's posts")
        #expect(try await store.run("checking the vectors", """
            SELECT count(*) FROM posts WHERE search IS DISTINCT FROM to_tsvector('simple', coalesce(text, '') || ' ' || coalesce(title, '')
                || ' ' || coalesce(content_warning, '') || ' ' || coalesce(author_handle, '') || ' ' || coalesce(author_name, ''))
            """) == [["0"]])
    }

    /// A post that repeats its author's name nearly as often as a vector keeps a word's
    /// positions: the server's `||` would drop some of the name's, so the page is staged and
    /// upserted, and stored.
    @Test func aPostWhoseWordsWithItsAuthorsPassAVectorsLimitsIsStaged() async throws {
        let (store, _) = try await makeWorkers()
        let many = User(id: "u9", handle: "ada", displayName: Array(repeating: "Ada", count: 10).joined(separator: " "))
        let pages = pages(renamed: ada)
        var second = pages[1]
        second[0] = .upsert(Post(id: "many", author: many, text: Array(repeating: "ada", count: 249).joined(separator: " "),
                                 createdAt: Date(timeIntervalSince1970: 1_600_000_000)))
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        _ = try await store.apply(store.prepare(makePage(pages[0], cursor: "1")), videos: [], under: lease, announcing: nil)
        #expect(store.prepare(makePage(Array(second.dropFirst()), cursor: "2")).direct != nil, "the page without it is copied")
        let prepared = store.prepare(makePage(second, cursor: "2"))
        #expect(prepared.direct == nil)
        let result = try await store.apply(prepared, videos: [], under: lease, announcing: nil)
        #expect(result.inserted == second.count)
        #expect(try await store.run("reading the post", "SELECT length(search) FROM posts WHERE id = 'many'") == [["1"]])
    }

    /// An author whose handle the server would split otherwise (an address) leaves the page to
    /// the staged upsert, which stores the same.
    @Test func aPageWithWordsTheServerMakesIsStaged() async throws {
        let (store, _) = try await makeWorkers()
        let pages = pages(renamed: User(id: "u1", handle: "ada@example.social", displayName: "Ada"))
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        _ = try await store.apply(store.prepare(makePage(pages[0], cursor: "1")), videos: [], under: lease, announcing: nil)
        await store.recordStatementsForTests()
        let prepared = store.prepare(makePage(pages[1], cursor: "2"))
        #expect(prepared.direct == nil)
        let second = try await store.apply(prepared, videos: [], under: lease, announcing: nil)
        #expect(second.inserted == pages[1].count)
        #expect(!(await store.statementsSentForTests).contains { $0.hasPrefix("COPY posts") })
        #expect(try await store.run("checking the vectors", """
            SELECT count(*), count(*) FILTER (WHERE author_handle = 'ada' AND search @@ to_tsquery('simple', 'lovelace')) FROM posts
            WHERE search IS NOT DISTINCT FROM to_tsvector('simple', coalesce(text, '') || ' ' || coalesce(title, '')
                || ' ' || coalesce(content_warning, '') || ' ' || coalesce(author_handle, '') || ' ' || coalesce(author_name, ''))
            """) == [["\(2 * pages[0].count)", "\(pages[0].count / 2 + pages[1].count / 2)"]])
    }
}

private extension Array {
    func chunked(into size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0 ..< Swift.min($0 + size, count)]) }
    }
}
