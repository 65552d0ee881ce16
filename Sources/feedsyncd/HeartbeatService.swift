import App
import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Records in the store that the daemon is alive, and pets systemd's watchdog; when it stops,
/// removes the daemon's record and releases its leases.
///
/// It wakes on a timer only (every `daemon.heartbeat`, or half the watchdog interval when that
/// is shorter), so an idle daemon uses no CPU between beats.
struct HeartbeatService: Service {
    let scheduler: Scheduler
    let notifier: SystemdNotifier
    let log: Logger

    var name: String { "heartbeat" }

    /// The record lives in the store, which stays open until every user of it has stopped.
    var dependencies: [String] { ["runtime"] }

    /// This daemon as the store recorded it when it joined.
    let daemon: DaemonInstance

    func run(until shutdown: GracefulShutdown) async {
        while !shutdown.isRequested {
            let store = await scheduler.store
            do {
                try await store.beat(daemon)
            } catch {
                log.warn("heartbeat_failed", ["error": describe(error)])
            }
            notifier.notify("WATCHDOG=1")
            var wait = Duration.seconds(await scheduler.heartbeatInterval)
            if let watchdog = notifier.watchdogInterval, watchdog < wait { wait = watchdog }
            if await shutdown.requested(within: wait) { break }
        }
        // The scheduler depends on this service, so its syncs have ended here: no page commits
        // after the leases go (DaemonCLI leaves again after the store closes, for the lock alone).
        await scheduler.store.leave(daemon)
        log.info("left", ["daemon": daemon.id])
    }
}
