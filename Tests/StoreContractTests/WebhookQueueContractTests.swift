import Core
import Foundation
import Testing

/// The webhook queue, the same on both stores and seen from another connection (a restarted
/// daemon): queued once by id, due in order, rescheduled, removed.
enum WebhookQueueContract {
    static func aDeliveryIsKeptUntilRemovedAndIsDueWhenItsRetrySaysSo(_ kind: StoreKind) async throws {
        let (store, restarted) = try await makeStores(kind)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let first = WebhookDelivery(id: "d1", endpoint: "http://127.0.0.1:9/hook", body: #"{"event":"new"}"#)
        let second = WebhookDelivery(id: "d2", endpoint: "http://127.0.0.1:9/hook", body: #"{"event":"deleted"}"#)
        try await store.enqueue([first, second], at: now)
        try await store.enqueue([WebhookDelivery(id: "d1", endpoint: "x", body: "changed")], at: now.addingTimeInterval(5))
        #expect(try await restarted.dueDeliveries(at: now, limit: 10) == [first, second], "queued once, in order, from any connection")
        #expect(try await restarted.dueDeliveries(at: now.addingTimeInterval(-1), limit: 10).isEmpty)
        #expect(try await restarted.dueDeliveries(at: now, limit: 1) == [first])

        try await restarted.retryDelivery("d1", attempts: 1, at: now.addingTimeInterval(60))
        #expect(try await store.dueDeliveries(at: now, limit: 10) == [second])
        var retried = first
        retried.attempts = 1
        #expect(try await store.dueDeliveries(at: now.addingTimeInterval(60), limit: 10) == [second, retried])
        try await store.removeDelivery("d2")
        #expect(try await restarted.dueDeliveries(at: now.addingTimeInterval(3600), limit: 10) == [retried])
    }
}

@Suite struct SQLiteWebhookQueueContractTests {
    @Test func queue() async throws { try await WebhookQueueContract.aDeliveryIsKeptUntilRemovedAndIsDueWhenItsRetrySaysSo(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresWebhookQueueContractTests {
    @Test func queue() async throws { try await WebhookQueueContract.aDeliveryIsKeptUntilRemovedAndIsDueWhenItsRetrySaysSo(.postgres) }
}
