import Core
import Foundation
import SQLiteCache
import Testing

/// A page commit writes each author once, and binds the key, handle and name their write
/// returned to all their posts (no read of what it wrote): every post must still link to its
/// own author and reposter, and carry the profile stored for them (the newest seen), which is
/// what search finds.
@Suite struct PageAuthorsTests {
    let path: String

    init() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-authors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("cache.sqlite").path
    }

    func makeStore() async throws -> SQLiteFeedStore {
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        return store
    }

    func makeUser(_ id: String, handle: String) -> User { User(id: UserID(id), handle: handle, displayName: "Name of \(handle)") }

    func makePost(_ id: String, by author: User, at seconds: Double, repostedBy: User? = nil) -> Post {
        Post(id: PostID(id), author: author, text: "text of \(id)", createdAt: Date(timeIntervalSince1970: seconds),
             repost: repostedBy.map { Post.Repost(by: $0, originalID: PostID("original-\(id)")) })
    }

    func makePage(_ posts: [Post], cursor: String) -> FeedPage {
        FeedPage(changes: posts.map { .upsert($0) }, nextCursor: FeedCursor(position: cursor), hasMore: false)
    }

    @Test func postsOfSeveralAuthorsLinkToTheirOwnAuthorAndReposter() async throws {
        let store = try await makeStore()
        let (ada, bob, cy) = (makeUser("u1", handle: "ada"), makeUser("u2", handle: "bob"), makeUser("u3", handle: "cy"))
        let posts = [makePost("p1", by: ada, at: 1), makePost("p2", by: bob, at: 2), makePost("p3", by: ada, at: 3, repostedBy: cy),
                     makePost("p4", by: cy, at: 4, repostedBy: bob), makePost("p5", by: bob, at: 5)]

        _ = try await store.apply(makePage(posts, cursor: "1"), videos: [], under: testLease("home"))

        #expect(try sqlite3(path, "SELECT group_concat(p.id || '=' || a.handle, ' ') FROM posts p JOIN users a ON a.pk = p.author_pk ORDER BY p.pk")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "p1=ada p2=bob p3=ada p4=cy p5=bob")
        #expect(try sqlite3(path, "SELECT group_concat(p.id || '=' || r.handle, ' ') FROM posts p JOIN users r ON r.pk = p.repost_by_pk ORDER BY p.pk")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "p3=cy p4=bob")
        #expect(try sqlite3(path, "SELECT count(*) FROM posts WHERE author_handle IS NOT (SELECT handle FROM users WHERE pk = author_pk) "
                                + "OR author_name IS NOT (SELECT display_name FROM users WHERE pk = author_pk)")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        let stored = try await store.posts(matching: PostQuery(feed: "home"))
        #expect(Set(stored.map(\.post)) == Set(posts))
    }

    @Test func anOlderPageCommittedLaterCarriesTheNewerStoredProfileIntoSearch() async throws {
        let store = try await makeStore()
        // A backfill commits the newest page first: the author's handle changed in between.
        _ = try await store.apply(makePage([makePost("p2", by: makeUser("u1", handle: "renamed"), at: 2_000)], cursor: "a"),
                                  videos: [], under: testLease("home"))
        _ = try await store.apply(makePage([makePost("p1", by: makeUser("u1", handle: "formerly"), at: 1_000)], cursor: "b"),
                                  videos: [], under: testLease("home"))

        #expect(try sqlite3(path, "SELECT group_concat(author_handle, ' ') FROM posts ORDER BY pk")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "renamed renamed")
        #expect(Set(try await store.search(SearchQuery(text: "renamed")).map(\.stored.post.id)) == ["p1", "p2"],
                "findable by the stored handle as soon as the page commits")
        #expect(try await store.search(SearchQuery(text: "formerly")).isEmpty)
    }

    /// An author stored exactly as a page has them (the same profile, from a post of the same
    /// time) is not rewritten, so their write returns nothing: their new posts take the page's
    /// handle and name and find the author's key themselves. A stored profile newer than the
    /// page's comes back as it was: it is not counted as written.
    @Test func anAuthorWithNothingToWriteStillLinksTheirNewPostsAndCountsNoRow() async throws {
        let store = try await makeStore()
        let (ada, cy) = (makeUser("u1", handle: "ada"), makeUser("u3", handle: "cy"))
        _ = try await store.apply(makePage([makePost("p1", by: ada, at: 1_000), makePost("p0", by: cy, at: 5_000)], cursor: "1"),
                                  videos: [], under: testLease("home"))
        // p2 is as old as p1, p3 older than cy's stored profile: neither author has anything to write.
        let page = try await store.apply(makePage([makePost("p2", by: ada, at: 1_000, repostedBy: cy), makePost("p3", by: cy, at: 4_000)],
                                                  cursor: "2"), videos: [], under: testLease("home"))
        #expect(page.inserted == 2)
        #expect(page.rowsWritten == 3, "two posts and the cursor; no author")
        #expect(try sqlite3(path, "SELECT group_concat(p.id || '=' || a.handle || '/' || coalesce(r.handle, '-'), ' ') FROM posts p "
                                + "JOIN users a ON a.pk = p.author_pk LEFT JOIN users r ON r.pk = p.repost_by_pk ORDER BY p.pk")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "p1=ada/- p0=cy/- p2=ada/cy p3=cy/-")
        #expect(Set(try await store.search(SearchQuery(text: "ada")).map(\.stored.post.id)) == ["p1", "p2"])
    }
}
