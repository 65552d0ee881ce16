import Core
import Foundation
import Sync

/// Sends the webhook deliveries the store holds, apart from every sync: a slow or dead endpoint
/// delays only its own deliveries.
///
/// Each round takes at most ``roundSize`` due deliveries, earliest first. A delivery that fails
/// is due again after ``backoff`` (its n-th failure waits `first × 2^(n-1)`, capped, with
/// jitter); after ``maxAttempts`` failures it is given up, with a log line. Once an endpoint
/// fails in a round, its other deliveries wait for the next round: a down endpoint gets one
/// attempt a round, not one per delivery. A delivery is removed only once its endpoint answered
/// 2xx: delivery is at least once.
public struct WebhookDispatcher: Sendable {
    public static let roundSize = 20

    let queue: any WebhookQueue
    let targets: [WebhookTarget]
    let sender: any WebhookSending
    let log: Logger
    let backoff: Backoff
    let maxAttempts: Int
    /// Counts each attempt's outcome (`feedsync_webhook_deliveries_total`).
    let metrics: MetricsRegistry?

    /// - Parameter shortWaits: the tests' waits (0.2 s doubling to 2 s) instead of 10 s doubling to
    ///   10 minutes, and 120 attempts instead of 12: a delivery is given up after minutes rather
    ///   than the 10–19 s that twelve short waits add up to, which a loaded machine's stop and
    ///   restart of a daemon outlasted (the end-to-end webhook test).
    /// - Returns: `nil` when no integration of `registry` sends webhooks.
    public init?(queue: any WebhookQueue, targets: [WebhookTarget], log: Logger, metrics: MetricsRegistry? = nil, shortWaits: Bool = false,
                 registry: IntegrationRegistry = .standard) {
        guard let sending = registry.descriptors.lazy.compactMap(\.webhooks).first else { return nil }
        self.queue = queue
        self.targets = targets
        self.log = log
        self.metrics = metrics
        sender = sending.makeSender("feedsync/\(feedsyncVersion)")
        backoff = shortWaits ? Backoff(first: 0.2, cap: 2, jitter: .upperHalf) : Backoff(first: 10, cap: 600, jitter: .upperHalf)
        maxAttempts = shortWaits ? 120 : 12
    }

    /// Sends the deliveries due at `now`.
    ///
    /// - Returns: how many were tried.
    public func deliverDue(now: Date = Date()) async -> Int {
        let due: [WebhookDelivery]
        do {
            due = try await queue.dueDeliveries(at: now, limit: Self.roundSize)
        } catch {
            log.warn("webhook_queue_unreadable", ["error": "\(error)"])
            return 0
        }
        var failing = Set<String>()
        var generator = SystemRandomNumberGenerator()
        for delivery in due where !failing.contains(delivery.endpoint) {
            guard let target = targets.first(where: { $0.url.absoluteString == delivery.endpoint }) else {
                log.error("webhook_given_up", ["delivery": delivery.id, "endpoint": Terminal.safe(delivery.endpoint, limit: 200),
                                               "reason": "no webhook of the config has this url any more"])
                metrics?.webhookAttempted("given_up")
                try? await queue.removeDelivery(delivery.id)
                continue
            }
            let failure = await sender.send(delivery, secret: target.secret, now: Date())
            do {
                switch failure {
                case nil:
                    metrics?.webhookAttempted("delivered")
                    try await queue.removeDelivery(delivery.id)
                case let reason?:
                    failing.insert(delivery.endpoint)
                    let attempts = delivery.attempts + 1
                    let fields: KeyValuePairs<String, String> = ["delivery": delivery.id, "endpoint": Terminal.safe(delivery.endpoint, limit: 200),
                                                                 "attempt": "\(attempts)", "error": reason]
                    if attempts >= maxAttempts {
                        log.error("webhook_given_up", fields)
                        metrics?.webhookAttempted("given_up")
                        try await queue.removeDelivery(delivery.id)
                    } else {
                        log.warn("webhook_failed", fields)
                        metrics?.webhookAttempted("retried")
                        let wait = backoff.delay(afterFailures: attempts, using: &generator)
                        try await queue.retryDelivery(delivery.id, attempts: attempts, at: Date().addingTimeInterval(wait))
                    }
                }
            } catch {
                log.warn("webhook_queue_unwritable", ["delivery": delivery.id, "error": "\(error)"])
            }
        }
        return due.count
    }

    /// Releases the sender's connections.
    public func close() async { await sender.close() }
}
