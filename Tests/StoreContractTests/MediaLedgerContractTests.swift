import Core
import Foundation
import Testing

/// The media archive's rows, the same on both stores and seen from another connection: an
/// address is one row whatever refers to it, due newest first, its outcome kept, the same bytes
/// counted once; references go with a retention removal and a purge, and then the rows are
/// unreferenced.
enum MediaLedgerContract {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func reference(_ feed: String, _ post: String, _ path: String, at seconds: Double, kind: MediaKind = .image) -> MediaReference {
        MediaReference(feed: feed, postID: PostID(post), postedAt: Date(timeIntervalSince1970: seconds),
                       item: MediaItem(url: URL(string: "https://media.example/\(path)")!, kind: kind, expectedType: "image/png", expectedBytes: 10))
    }

    static func addressesAreOneRowDueNewestFirstAndTheSameBytesCountOnce(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        try await store.recordMedia([reference("home", "p1", "a.png", at: 100), reference("news", "n1", "a.png", at: 300),
                                     reference("home", "p2", "b.png", at: 200), reference("home", "p2", "c.mp3", at: 200, kind: .audio)],
                                    at: now)
        try await store.recordMedia([reference("home", "p1", "a.png", at: 100)], at: now)
        let due = try await other.mediaDue(limit: 10, includingSkipped: false)
        #expect(due.map(\.item.url.lastPathComponent) == ["a.png", "b.png", "c.mp3"], "the newest referring post first, then by address")
        #expect(due.map(\.feed) == ["home", "home", "home"])
        #expect(due[2].item.kind == .audio && due[0].item.expectedType == "image/png" && due[0].item.expectedBytes == 10)

        let digest = String(repeating: "ab", count: 32)
        try await store.recordMediaOutcomes(due.prefix(2).map { item, _ in
            var fetched = item
            fetched.status = .fetched
            fetched.digest = digest
            fetched.bytes = 2048
            fetched.mediaType = "image/png"
            fetched.fetchedAt = now
            fetched.attempts = 1
            return fetched
        })
        var failed = due[2].item
        failed.status = .failed
        failed.reason = "the server answered 503"
        failed.attempts = MediaItem.maxAttempts
        try await store.recordMediaOutcomes([failed])
        #expect(try await other.mediaDue(limit: 10, includingSkipped: false).isEmpty, "a failed item has had its attempts")
        let summary = try await other.mediaSummary()
        #expect(summary.files == 1 && summary.bytes == 2048, "two addresses, one file")
        #expect(summary.count(.fetched) == 2 && summary.count(.failed) == 1)
        #expect(try await other.mediaRows(withDigest: digest) == 2)
        let holdings = try await other.mediaHoldings()
        #expect(holdings.map { "\($0.url.lastPathComponent):\($0.feed)" } == ["a.png:home", "a.png:news", "b.png:home"])

        // A purge drops the feed's references: what only it pointed at is unreferenced.
        _ = try await store.purge(feed: "home")
        #expect(try await other.unreferencedMedia().map(\.url.lastPathComponent) == ["b.png", "c.mp3"])
        try await other.removeMedia(try await other.unreferencedMedia().map(\.url))
        #expect(try await store.mediaSummary().count(.fetched) == 1)
    }

    static func aRetentionRemovalDropsThePostsReferencesAndADeletionAtTheSourceDoesNot(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        let day: Double = 86_400
        let posts = (0..<3).map { makePost("p\($0)", at: now.timeIntervalSince1970 - Double(3 - $0) * day) }
        _ = try await store.commit(makePage(posts.map(FeedChange.upsert), cursor: "3"))
        try await store.recordMedia(posts.map { reference("home", $0.id.rawValue, "\($0.id.rawValue).png", at: $0.createdAt.timeIntervalSince1970) },
                                    at: now)
        // p2 is deleted at the source: its reference stays.
        _ = try await store.commit(makePage([.delete(PostID("p2"))], cursor: "4"))
        #expect(try await store.unreferencedMedia().isEmpty)
        // "keep" removes p0 (the oldest, read): its reference goes with it.
        _ = try await store.setRead(true, postID: PostID("p0"), inFeed: "home")
        #expect(try await underLease(store) { try await store.prune(Retention(posts: 1), now: now, limit: 10, under: $0) } == 1)
        #expect(try await store.unreferencedMedia().map(\.url.lastPathComponent) == ["p0.png"])
    }
}

@Suite struct SQLiteMediaLedgerContractTests {
    @Test func ledger() async throws { try await MediaLedgerContract.addressesAreOneRowDueNewestFirstAndTheSameBytesCountOnce(.sqlite) }
    @Test func references() async throws { try await MediaLedgerContract.aRetentionRemovalDropsThePostsReferencesAndADeletionAtTheSourceDoesNot(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresMediaLedgerContractTests {
    @Test func ledger() async throws { try await MediaLedgerContract.addressesAreOneRowDueNewestFirstAndTheSameBytesCountOnce(.postgres) }
    @Test func references() async throws { try await MediaLedgerContract.aRetentionRemovalDropsThePostsReferencesAndADeletionAtTheSourceDoesNot(.postgres) }
}
