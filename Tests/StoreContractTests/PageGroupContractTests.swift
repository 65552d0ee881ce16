import Core
import Foundation
import Testing

/// Pages a sync has waiting commit together (``PageCommitter/apply(_:under:announcing:)``): in
/// order, each as it would alone, in one transaction.
enum PageGroupContract {
    /// Commits `pages` together, each with `videos` as its videos.
    static func commitTogether<Store: PageCommitter>(_ store: Store, _ pages: [(FeedPage, [Video])], under lease: FeedLease,
                                                     announcing announcer: (any PageAnnouncer)? = nil) async throws -> [PageWriteResult] {
        try await store.apply(pages.map { (page: store.prepare($0.0), videos: $0.1) }, under: lease, announcing: announcer)
    }

    /// Posts `first...last`, with `text`.
    static func posts(_ range: ClosedRange<Int>, text: String = "hello") -> [FeedChange] {
        range.map { .upsert(makePost("p\($0)", text: text)) }
    }

    static func pagesCommittedTogetherAreWrittenInOrderEachWithWhatItDid(_ kind: StoreKind) async throws {
        let (store, restarted) = try await makeStores(kind)
        #expect(store.pagesPerTransaction == 8)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let announcer = WebhookPageContract.ListingAnnouncer(due: now)
        let video = Video(id: "v1", title: "One", duration: 1, streamURL: URL(string: "https://videos.example/1")!)
        var withVideo = makePost("p201", text: "apricot tart")
        withVideo.videoIDs = ["v1"]
        // Long pages (PostgreSQL copies a page of more than 64 posts through a staging table,
        // which each page of the transaction must find empty, or the third would bring back what
        // the second deleted and rewrote) and a short one, each rewriting or deleting what the
        // pages before it wrote.
        let pages: [(FeedPage, [Video])] = [
            (makePage(posts(1...100), cursor: "1"), []),
            (makePage([.upsert(withVideo)] + posts(2...2, text: "edited") + [.delete("p1")], cursor: "2"), [video]),
            (makePage(posts(101...199) + posts(3...3, text: "edited"), cursor: "3"), []),
        ]

        let results = try await underLease(store) { lease in try await commitTogether(store, pages, under: lease, announcing: announcer) }

        #expect(results.map { [$0.inserted, $0.updated, $0.deleted] } == [[100, 0, 0], [1, 1, 1], [99, 1, 0]])
        #expect(announcer.results.withLock { $0.map(\.inserted) } == [100, 1, 99], "asked with what each page did")
        #expect(try await restarted.cursor(ofFeed: "home")?.position == "3")
        let stored = try await restarted.posts(matching: PostQuery(feed: "home", limit: 1_000)).map(\.post)
        #expect(stored.count == 199 && !stored.contains { $0.id == "p1" })
        #expect(stored.filter { $0.text == "edited" }.map(\.id).sorted() == ["p2", "p3"])
        #expect(try await restarted.videosToResolve(among: ["v1"], inFeed: "home").isEmpty, "the third page's video")
        #expect(try await restarted.search(SearchQuery(text: "apricot")).map(\.stored.post.id) == ["p201"])
        #expect(try await restarted.dueDeliveries(at: now, limit: 1_000).count == 203, "one for each post each page wrote or deleted")
    }

    /// A group that cannot commit keeps none of its pages: PostgreSQL's store checks the lease
    /// as the transaction begins (SQLite's lease is a lock on the file, which it cannot lose;
    /// its own tests fail a group with a trigger).
    static func aGroupThatFailsKeepsNoneOfItsPages(_ kind: StoreKind) async throws {
        let (store, restarted) = try await makeStores(kind)
        _ = try await store.commit(makePage(posts(1...1), cursor: "1"))
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "test", wait: 5, onlyIfDue: false))
        await store.release(lease)

        await #expect(throws: ServiceError.self) {
            _ = try await commitTogether(store, [(makePage(posts(2...100), cursor: "2"), []), (makePage(posts(101...101), cursor: "3"), [])],
                                         under: lease)
        }

        #expect(try await restarted.posts(matching: PostQuery(feed: "home")).map(\.post.id) == ["p1"])
        #expect(try await restarted.cursor(ofFeed: "home")?.position == "1")
    }
}

@Suite struct SQLitePageGroupContractTests {
    @Test func together() async throws { try await PageGroupContract.pagesCommittedTogetherAreWrittenInOrderEachWithWhatItDid(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresPageGroupContractTests {
    @Test func together() async throws { try await PageGroupContract.pagesCommittedTogetherAreWrittenInOrderEachWithWhatItDid(.postgres) }
    @Test func failed() async throws { try await PageGroupContract.aGroupThatFailsKeepsNoneOfItsPages(.postgres) }
}
