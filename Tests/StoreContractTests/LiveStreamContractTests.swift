import Core
import Foundation
import Testing

/// What every store promises a live stream: deletes that take reposts along, and the stream
/// position committed with its page, with an author's new handle that came without a post.
extension StoreContract {
    static func aDeletedPostTakesItsRepostsAlongAndADeletedRepostOnlyItself(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        func repost(_ id: String, of original: String, by handle: String) -> Post {
            var post = makePost(id)
            post.repost = Post.Repost(by: User(id: UserID("r-\(handle)"), handle: handle, displayName: handle), originalID: PostID(original),
                                      at: Date(timeIntervalSince1970: 1_700_000_900))
            return post
        }
        _ = try await store.commit(makePage([.upsert(makePost("p1")), .upsert(makePost("p2")),
                                             .upsert(repost("r1", of: "p1", by: "grace")), .upsert(repost("r2", of: "p1", by: "linus")),
                                             .upsert(repost("r3", of: "p2", by: "grace"))], cursor: "1"))
        func ids() async throws -> [String] { try await store.posts(matching: PostQuery(feed: "home")).map(\.post.id.rawValue).sorted() }

        let repostGone = try await store.commit(makePage([.delete("r3")], cursor: "2"))
        #expect(repostGone.deleted == 1)
        #expect(try await ids() == ["p1", "p2", "r1", "r2"], "a repost's delete removes that entry only")

        let postGone = try await store.commit(makePage([.delete("p1")], cursor: "3"))
        #expect(postGone.deleted == 3)
        #expect(try await ids() == ["p2"], "a post's delete removes it and every entry that reposts it")
        #expect(try await store.search(SearchQuery(text: "hello")).map(\.stored.post.id) == ["p2"], "and their search entries")
    }

    static func aStreamPositionIsCommittedWithItsPageAndReadBackByAnotherConnection(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let reader = other
        #expect(try await reader.streamPosition(ofFeed: "home") == nil)

        var page = makePage([.upsert(makePost("p1"))], cursor: "1")
        page.streamPosition = "1725911162329308"
        _ = try await store.commit(page)
        #expect(try await reader.streamPosition(ofFeed: "home") == "1725911162329308")

        _ = try await store.commit(makePage([.upsert(makePost("p2"))], cursor: "2"))
        #expect(try await reader.streamPosition(ofFeed: "home") == "1725911162329308", "a page without a position leaves it")
        var empty = makePage([], cursor: "2")
        empty.streamPosition = "1725911162999999"
        _ = try await store.commit(empty)
        #expect(try await reader.streamPosition(ofFeed: "home") == "1725911162999999", "a page of no changes still moves it")
        #expect(try await reader.streamPosition(ofFeed: "other") == nil)
    }

    /// A streamed batch's page carries no cursor: the feed keeps the one its last poll committed,
    /// however new, and the batch's posts, renames and stream position go in.
    static func aPageWithoutACursorKeepsTheStoredOneAndCommitsTheRest(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "polled-7"))
        let streamed = FeedPage(streamed: [.upsert(makePost("p2", text: "second", at: 1_700_000_500))], streamPosition: "1700000500000000",
                                renames: [AuthorRename(author: "u1", handle: "lovelace", at: Date(timeIntervalSince1970: 1_700_001_000))])
        let result = try await store.commit(streamed)
        #expect(result.inserted == 1 && result.renamed == 1)
        #expect(try await other.cursor(ofFeed: "home") == FeedCursor(position: "polled-7"))
        #expect(try await other.streamPosition(ofFeed: "home") == "1700000500000000")
        #expect(try await other.posts(matching: PostQuery(feed: "home")).map(\.post.id.rawValue).sorted() == ["p1", "p2"])

        _ = try await store.commit(makePage([], cursor: "polled-8"))
        _ = try await store.commit(FeedPage(streamed: [.delete("p1")]))
        #expect(try await other.cursor(ofFeed: "home") == FeedCursor(position: "polled-8"), "never back to an older one")
        #expect(try await other.streamPosition(ofFeed: "home") == "1700000500000000", "a batch without a position leaves it")
    }

    /// An `identity` event's rename rides in the page with the stream position: both are committed
    /// or neither, so a daemon that resumes from the stored position never steps past a rename it lost.
    static func aRenameInAPageIsCommittedWithItsStreamPosition(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "1"))
        let rename = AuthorRename(author: "u1", handle: "lovelace", at: Date(timeIntervalSince1970: 1_700_001_000))
        var page = makePage([.upsert(makePost("p2", text: "second", at: 1_700_000_500))], cursor: "1")
        page.streamPosition = "1700001000000001"
        page.renames = [rename, AuthorRename(author: "u9", handle: "nobody", at: rename.at)]
        let result = try await store.commit(page)
        #expect(result.renamed == 1, "the stored author only; a stranger is left alone")
        #expect(try await other.streamPosition(ofFeed: "home") == "1700001000000001")
        #expect(try await other.posts(matching: PostQuery(feed: "home")).map(\.post.author.handle) == ["lovelace", "lovelace"],
                "applied after the page's posts: the one it brought takes the new handle too")
        #expect(try await other.search(SearchQuery(text: "lovelace")).count == 2)

        func renamed(_ handle: String, at seconds: Double) async throws -> Int {
            var page = makePage([], cursor: "1")
            page.renames = [AuthorRename(author: "u1", handle: handle, at: Date(timeIntervalSince1970: seconds))]
            return try await store.commit(page).renamed
        }
        #expect(try await renamed("lovelace", at: 1_700_002_000) == 0, "the same handle changes nothing")
        #expect(try await renamed("ada-old", at: 1_600_000_000) == 0, "a rename older than the stored profile is not applied")
        // An older page carrying the old profile does not bring it back.
        _ = try await store.commit(makePage([.upsert(makePost("p0", text: "zeroth", at: 1_600_000_000))], cursor: "2"))
        #expect(try await other.posts(matching: PostQuery(feed: "home")).allSatisfy { $0.post.author.handle == "lovelace" })
    }
}

extension SQLiteStoreContractTests {
    @Test func aDeletedPostTakesItsRepostsAlongAndADeletedRepostOnlyItself() async throws {
        try await StoreContract.aDeletedPostTakesItsRepostsAlongAndADeletedRepostOnlyItself(.sqlite)
    }
    @Test func aStreamPositionIsCommittedWithItsPageAndReadBackByAnotherConnection() async throws {
        try await StoreContract.aStreamPositionIsCommittedWithItsPageAndReadBackByAnotherConnection(.sqlite)
    }
    @Test func aRenameInAPageIsCommittedWithItsStreamPosition() async throws {
        try await StoreContract.aRenameInAPageIsCommittedWithItsStreamPosition(.sqlite)
    }
    @Test func aPageWithoutACursorKeepsTheStoredOneAndCommitsTheRest() async throws {
        try await StoreContract.aPageWithoutACursorKeepsTheStoredOneAndCommitsTheRest(.sqlite)
    }
}

extension PostgresStoreContractTests {
    @Test func aDeletedPostTakesItsRepostsAlongAndADeletedRepostOnlyItself() async throws {
        try await StoreContract.aDeletedPostTakesItsRepostsAlongAndADeletedRepostOnlyItself(.postgres)
    }
    @Test func aStreamPositionIsCommittedWithItsPageAndReadBackByAnotherConnection() async throws {
        try await StoreContract.aStreamPositionIsCommittedWithItsPageAndReadBackByAnotherConnection(.postgres)
    }
    @Test func aRenameInAPageIsCommittedWithItsStreamPosition() async throws {
        try await StoreContract.aRenameInAPageIsCommittedWithItsStreamPosition(.postgres)
    }
    @Test func aPageWithoutACursorKeepsTheStoredOneAndCommitsTheRest() async throws {
        try await StoreContract.aPageWithoutACursorKeepsTheStoredOneAndCommitsTheRest(.postgres)
    }
}
