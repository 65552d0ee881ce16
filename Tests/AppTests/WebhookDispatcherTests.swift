@testable import App
import Core
import Foundation
import Synchronization
import Sync
import Testing

/// What the dispatcher does with each attempt's outcome: removes a delivered one, reschedules a
/// failed one, gives one up after its last attempt; each counted on `/metrics`.
@Suite struct WebhookDispatcherTests {
    /// The store's queue in memory: every delivery due at once, whatever its retry time.
    final class MemoryQueue: WebhookQueue {
        let held = Mutex<[WebhookDelivery]>([])
        func enqueue(_ deliveries: [WebhookDelivery], at now: Date) async throws { held.withLock { $0 += deliveries } }
        func dueDeliveries(at now: Date, limit: Int) async throws -> [WebhookDelivery] { held.withLock { Array($0.prefix(limit)) } }
        func removeDelivery(_ id: String) async throws { held.withLock { $0.removeAll { $0.id == id } } }
        func retryDelivery(_ id: String, attempts: Int, at next: Date) async throws {
            held.withLock { held in if let index = held.firstIndex(where: { $0.id == id }) { held[index].attempts = attempts } }
        }
    }

    /// Answers each endpoint as told: `nil` (2xx) or a failure.
    final class ScriptedSender: WebhookSending {
        let failing: Set<String>
        let sent = Mutex<[String]>([])
        init(failing: Set<String>) { self.failing = failing }
        func send(_ delivery: WebhookDelivery, secret: Secret, now: Date) async -> String? {
            sent.withLock { $0.append(delivery.id) }
            return failing.contains(delivery.endpoint) ? "the endpoint answered 503" : nil
        }
        func close() async {}
    }

    @Test func aFailingDeliveryIsRetriedThenGivenUpAndEachOutcomeIsCounted() async throws {
        let (up, down) = ("https://up.example/hook", "https://down.example/hook")
        let sender = ScriptedSender(failing: [down])
        let fake = IntegrationDescriptor(name: "test-webhooks", summary: "", example: "{}", keys: [],
                                         webhooks: WebhooksCapability { _ in sender })
        let queue = MemoryQueue()
        try await queue.enqueue([WebhookDelivery(id: "a", endpoint: up, body: "{}"), WebhookDelivery(id: "b", endpoint: down, body: "{}"),
                                 WebhookDelivery(id: "c", endpoint: down, body: "{}")], at: Date())
        let metrics = MetricsRegistry(version: "test")
        let log = LogRecorder()
        let targets = [up, down].map { WebhookTarget(url: URL(string: $0)!, secret: Secret("secret-value-123"), events: [.new], feeds: [], rules: PostRules()) }
        let dispatcher = try #require(WebhookDispatcher(queue: queue, targets: targets, log: Logger(minimum: .info, handler: log), metrics: metrics,
                                                        registry: IntegrationRegistry([fake] + IntegrationRegistry.standard.descriptors)))

        for _ in 0 ..< dispatcher.maxAttempts { _ = await dispatcher.deliverDue() }

        #expect(queue.held.withLock { $0 }.map(\.id) == ["c"], "a delivered; b given up; c waits behind b, one attempt a round")
        #expect(sender.sent.withLock { $0 }.filter { $0 == "b" }.count == dispatcher.maxAttempts)
        #expect(!sender.sent.withLock { $0 }.contains("c"))
        let text = metrics.renderedText()
        #expect(text.contains(#"feedsync_webhook_deliveries_total{outcome="delivered"} 1"#), "\(text)")
        #expect(text.contains(#"feedsync_webhook_deliveries_total{outcome="retried"} \#(dispatcher.maxAttempts - 1)"#))
        #expect(text.contains(#"feedsync_webhook_deliveries_total{outcome="given_up"} 1"#))
        #expect(log.all.filter { $0.hasPrefix("error webhook_given_up delivery=b") }.count == 1, "\(log.all)")
    }
}
