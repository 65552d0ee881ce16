import App
import Core

/// Runs the scheduler as a service: starts the feeds, and on a graceful shutdown stops
/// starting syncs and lets the ones under way finish their page or abort.
struct SchedulerService: Service {
    let scheduler: Scheduler

    var name: String { "scheduler" }

    /// Syncs write under the leases of the daemon the heartbeat keeps in the store: they must
    /// end before it leaves (and releases every lease).
    var dependencies: [String] { ["heartbeat"] }

    func run(until shutdown: GracefulShutdown) async {
        await scheduler.start()
        await shutdown.requested()
        await scheduler.stop()
    }
}

/// Owns the runtimes' lifetime: when everything that uses the store has stopped, tears the
/// integrations down and closes the store.
struct RuntimeService: Service {
    let scheduler: Scheduler

    var name: String { "runtime" }

    func run(until shutdown: GracefulShutdown) async {
        await shutdown.requested()
        await scheduler.close()
    }
}
