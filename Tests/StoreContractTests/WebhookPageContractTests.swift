import Core
import Foundation
import Synchronization
import Testing

/// A page's webhook deliveries are queued in the page's own transaction, from what the store did
/// with it: committed with the page, or not at all.
enum WebhookPageContract {
    /// Makes one delivery per post a page inserted, rewrote or deleted, named for the event and
    /// the post, and records each result it was given.
    final class ListingAnnouncer: PageAnnouncer {
        let due: Date
        let results = Mutex<[PageWriteResult]>([])
        init(due: Date) { self.due = due }

        func announcement(feed: String, page: FeedPage, result: PageWriteResult) -> (deliveries: [WebhookDelivery], due: Date) {
            results.withLock { $0.append(result) }
            let events = result.insertedIDs.map { "new-\($0.rawValue)" } + result.updatedIDs.map { "updated-\($0.rawValue)" }
                + result.deletedIDs.map { "deleted-\($0.rawValue)" }
            return (events.map { WebhookDelivery(id: "\(feed)-\($0)", endpoint: "http://127.0.0.1:9/hook", body: #"{"e":"\#($0)"}"#) }, due)
        }
    }

    static func aPagesDeliveriesAreCommittedWithItAndOnlyWithIt(_ kind: StoreKind) async throws {
        let (store, restarted) = try await makeStores(kind)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let announcer = ListingAnnouncer(due: now)
        try await underLease(store) { lease in
            _ = try await store.apply(makePage([.upsert(makePost("p1")), .upsert(makePost("p2"))], cursor: "1"),
                                      videos: [], under: lease, announcing: announcer)
            _ = try await store.apply(makePage([.upsert(makePost("p1", text: "edited")), .upsert(makePost("p3")), .delete("p2")], cursor: "2"),
                                      videos: [], under: lease, announcing: announcer)
        }
        let queued = try await restarted.dueDeliveries(at: now, limit: 10).map(\.id)
        #expect(Set(queued) == ["home-new-p1", "home-new-p2", "home-updated-p1", "home-new-p3", "home-deleted-p2"],
                "seen from another connection: \(queued)")
        #expect(announcer.results.withLock { $0.map(\.inserted) } == [2, 1], "asked with what the page did")

        // A page that is not committed queues nothing: PostgreSQL's store checks the lease in the
        // page's transaction (SQLite's lease is a lock on the file, which it cannot lose).
        guard kind == .postgres else { return }
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "test", wait: 5, onlyIfDue: false))
        await store.release(lease)
        await #expect(throws: ServiceError.self) {
            _ = try await store.apply(makePage([.upsert(makePost("p3"))], cursor: "3"), videos: [], under: lease, announcing: announcer)
        }
        #expect(try await restarted.dueDeliveries(at: now, limit: 10).count == 5)
        #expect(try await restarted.cursor(ofFeed: "home")?.position == "2")
    }
}

@Suite struct SQLiteWebhookPageContractTests {
    @Test func page() async throws { try await WebhookPageContract.aPagesDeliveriesAreCommittedWithItAndOnlyWithIt(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresWebhookPageContractTests {
    @Test func page() async throws { try await WebhookPageContract.aPagesDeliveriesAreCommittedWithItAndOnlyWithIt(.postgres) }
}
