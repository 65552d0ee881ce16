import App
import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Records in the store that the daemon is alive, and pets systemd's watchdog.
///
/// It wakes on a timer only (every `daemon.heartbeat`, or half the watchdog interval when that
/// is shorter), so an idle daemon uses no CPU between beats.
struct HeartbeatService: Service {
    let scheduler: Scheduler
    let notifier: SystemdNotifier
    let log: Logger

    var name: String { "heartbeat" }

    /// This daemon as the store recorded it when it joined.
    let daemon: DaemonInstance

    func run() async {
        while !Task.isCancelled {
            let store = await scheduler.store
            do {
                try await store.beat(daemon)
            } catch {
                log.warn("heartbeat_failed", ["error": describe(error)])
            }
            notifier.notify("WATCHDOG=1")
            var wait = Duration.seconds(await scheduler.heartbeatInterval)
            if let watchdog = notifier.watchdogInterval, watchdog < wait { wait = watchdog }
            do { try await Task.sleep(for: wait) } catch { break }
        }
        // Stopping services runs in reverse, so the store is still open here: the record goes
        // with the daemon (DaemonCLI leaves again after the store closes, for the lock alone).
        await scheduler.store.leave(daemon)
    }
}
