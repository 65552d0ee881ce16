import App
import Core
import Foundation

/// Sends webhook deliveries (``App/WebhookDispatcher``) in a task of its own, so that no sync
/// waits for an endpoint. It checks the queue every second while there is nothing to send (a
/// tenth of one under the tests' short intervals), and follows a reloaded config's webhooks
/// (at once when the config had none before: it waits for the reload, not a timer).
struct WebhookService: Service {
    let scheduler: Scheduler
    let log: Logger
    let metrics: MetricsRegistry

    var name: String { "webhooks" }

    /// The queue is the store's, which stays open until every user of it has stopped.
    var dependencies: [String] { ["runtime"] }

    func run(until shutdown: GracefulShutdown) async {
        let short = ProcessInfo.processInfo.environment["FEEDSYNC_TEST_SHORT_INTERVALS"] == "1"
        var dispatcher: WebhookDispatcher?
        var current: (urls: [URL], secrets: [Secret], events: [Set<WebhookTarget.Event>])?
        while !shutdown.isRequested {
            let (runtime, reloaded) = await scheduler.currentRuntimeUntilReload
            let targets = runtime.webhooks
            let configured = (targets.map(\.url), targets.map(\.secret), targets.map(\.events))
            if current.map({ $0.urls != configured.0 || $0.secrets != configured.1 || $0.events != configured.2 }) ?? true {
                await dispatcher?.close()
                dispatcher = targets.isEmpty ? nil : WebhookDispatcher(queue: runtime.store, targets: targets, log: log, metrics: metrics, shortWaits: short)
                if !targets.isEmpty, dispatcher == nil { log.error("webhooks_unsent", ["reason": "no integration sends webhooks"]) }
                current = configured
            }
            // With no webhook configured there is no queue to watch, only a reload to wait for.
            guard let dispatcher else {
                if await shutdown.requested(orUntil: reloaded) { break }
                continue
            }
            let sent = await dispatcher.deliverDue()
            if sent == 0, await shutdown.requested(within: .milliseconds(short ? 100 : 1_000)) { break }
        }
        await dispatcher?.close()
    }
}
