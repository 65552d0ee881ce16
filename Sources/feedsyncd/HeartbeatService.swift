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
    let startedAt = Date()

    var name: String { "heartbeat" }

    func run() async {
        let pid = getpid()
        while !Task.isCancelled {
            let store = await scheduler.store
            do {
                try await store.beat(DaemonHeartbeat(pid: pid, startedAt: startedAt, beatAt: Date()))
            } catch {
                log.warn("heartbeat_failed", ["error": describe(error)])
            }
            notifier.notify("WATCHDOG=1")
            var wait = Duration.seconds(await scheduler.heartbeatInterval)
            if let watchdog = notifier.watchdogInterval, watchdog < wait { wait = watchdog }
            do { try await Task.sleep(for: wait) } catch { break }
        }
        try? await scheduler.store.clearHeartbeat(pid: pid)
    }
}
