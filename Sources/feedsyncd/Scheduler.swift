import App
import Core
import Foundation
import Sync

/// Runs every feed of the current config on its own schedule, at most `daemon.concurrency` at a
/// time (the runtime's ``Core/SyncSlots``), and swaps in a reloaded config without a restart.
///
/// Each feed has a task that sleeps until the feed is due, syncs, and picks its next time from
/// its ``RetrySchedule``. Sleeping is a timer, so an idle daemon uses no CPU. Feed tasks are
/// kept by name (not in a task group) because a reload must cancel or restart single feeds.
actor Scheduler {
    private struct Feed {
        var schedule: RetrySchedule
        var engine: SyncEngine
        /// Which runtime (config generation) built `engine`.
        var generation: Int
        var nextAt: Date
        var failures: Int
        var syncing = false
        var task: Task<Void, Never>?
        /// Why the backend asked to stop polling (410 Gone); a reload starts the feed again.
        var stopped: String?
    }

    private let log: Logger
    private var feeds: [String: Feed] = [:]
    private var runtimes: [Int: Runtime] = [:]
    /// Syncs under way per generation, so a replaced runtime is torn down only when idle.
    private var running: [Int: Int] = [:]
    private var generation = 0
    private var random = SystemRandomNumberGenerator()
    /// Set by ``stop()``: no sync starts any more.
    private var stopping = false
    /// The feeds whose `next_attempt_at` this daemon wrote last, as far as it knows: the only
    /// schedules it clears when it stops (other daemons sharing the store keep theirs).
    private var scheduledHere: Set<String> = []
    /// A test hook (`FEEDSYNC_TEST_BUSY_SYNC_SECONDS`): each sync first spins the CPU this long
    /// without looking at cancellation, as a long parse does, so tests can stop a busy daemon.
    private let busySeconds: Double?

    /// Told when each sync starts and ends.
    private let metrics: MetricsRegistry?

    init(runtime: Runtime, log: Logger, busySeconds: Double? = nil, metrics: MetricsRegistry? = nil) {
        self.log = log
        self.busySeconds = busySeconds
        self.metrics = metrics
        runtimes[0] = runtime
    }

    private var current: Runtime { runtimes[generation]! }

    /// The runtime of the config now in force.
    var currentRuntime: Runtime { current }

    /// The store of the current config.
    var store: any FeedStore { current.store }

    var heartbeatInterval: TimeInterval { current.daemon.heartbeat }

    /// When a feed runs next, as this daemon plans it; for tests.
    func nextRun(of name: String) -> Date? { feeds[name]?.nextAt }

    /// How many syncs run now: the media archive fetches only while none does.
    var syncsUnderWay: Int { feeds.values.lazy.filter(\.syncing).count }

    /// Starts every feed, resuming the failure counts the store remembers.
    func start() async {
        let failures = Dictionary((try? await current.store.feedStatuses())?.map { ($0.feed, $0.consecutiveFailures) } ?? [],
                                  uniquingKeysWith: { first, _ in first })
        for feed in current.provider.feeds {
            add(feed, failures: failures[feed.name] ?? 0)
        }
    }

    /// The graceful stop: starts no sync any more, cancels the syncs under way and waits for
    /// each to end; a page being committed finishes first (its transaction either commits or
    /// rolls back). The store stays open, for what stops after the scheduler (``close()``).
    func stop() async {
        stopping = true
        let tasks = feeds.values.compactMap(\.task)
        tasks.forEach { $0.cancel() }
        for task in tasks { await task.value }
        // Only the schedules this daemon wrote last, and of those only where the store still holds
        // this daemon's own (another daemon sharing the store may have scheduled the feed since).
        try? await current.store.unschedule(scheduledHere.sorted())
        scheduledHere.removeAll()
        feeds.removeAll()
    }

    /// Tears every runtime down, the store last: after ``stop()``, once nothing uses the store.
    func close() async {
        guard !runtimes.isEmpty else { return }
        // Every generation shares one store: close it once, with the current runtime.
        for (id, runtime) in runtimes where id != generation { await runtime.stop(keepingStore: true) }
        await current.stop()
        runtimes.removeAll()
    }

    /// Switches to a reloaded (already started) runtime: added feeds start, removed feeds stop,
    /// and every other feed continues with the new settings.
    func apply(_ runtime: Runtime) async {
        guard !stopping else { return await runtime.stop(keepingStore: true) }
        generation += 1
        runtimes[generation] = runtime
        let configured = Set(runtime.provider.feeds.map(\.name))
        for (name, feed) in feeds where !configured.contains(name) {
            feed.task?.cancel()
            feeds[name] = nil
            if scheduledHere.remove(name) != nil { try? await runtime.store.unschedule([name]) }
            log.info("feed_removed", ["feed": name])
        }
        for feedServices in runtime.provider.feeds {
            guard var feed = feeds[feedServices.name] else {
                add(feedServices, failures: 0)
                log.info("feed_added", ["feed": feedServices.name])
                continue
            }
            let schedule = makeSchedule(feedServices)
            feed.engine = engine(feedServices.name, runtime)
            feed.generation = generation
            if feed.stopped != nil && !feed.syncing {
                // A stopped feed is polled again after a reload: if its config changed, the
                // backend starts afresh; if not, it stops again without a request.
                feed.stopped = nil
                feed.nextAt = Date()
                feed.task?.cancel()
                feed.task = Task { await self.loop(feedServices.name) }
            } else if schedule != feed.schedule && !feed.syncing {
                // A shorter interval takes effect now rather than after the old, longer sleep.
                feed.nextAt = min(feed.nextAt, Date().addingTimeInterval(schedule.interval))
                feed.task?.cancel()
                feed.task = Task { await self.loop(feedServices.name) }
            }
            feed.schedule = schedule
            feeds[feedServices.name] = feed
        }
        await collectRuntimes()
    }

    private func add(_ feedServices: ServiceProvider.FeedServices, failures: Int) {
        let name = feedServices.name
        feeds[name] = Feed(schedule: makeSchedule(feedServices), engine: engine(name, current), generation: generation,
                           nextAt: Date(), failures: failures)
        feeds[name]?.task = Task { await self.loop(name) }
    }

    private func makeSchedule(_ feed: ServiceProvider.FeedServices) -> RetrySchedule {
        RetrySchedule(interval: feed.interval, maxBackoff: current.daemon.maxBackoff)
    }

    private func engine(_ name: String, _ runtime: Runtime) -> SyncEngine {
        var options = SyncEngine.Options()
        options.lockHolder = "feedsyncd"
        options.lockWait = runtime.daemon.lockWait
        // The feed comes from this runtime's own list, so the lookup cannot fail. The engine
        // waits out rate limits and backoff with the feed's slot of `runtime.slots` handed back.
        return try! runtime.engine(forFeed: name, options: options)
    }

    /// One feed's life: sleep until due, sync (when a slot is free), schedule the next run.
    private func loop(_ name: String) async {
        while !Task.isCancelled, !stopping, let due = feeds[name]?.nextAt {
            let wait = due.timeIntervalSinceNow
            if wait > 0 {
                // In nanoseconds rather than through a Clock: the generic clock's frames took 1 KiB
                // of each sleeping feed's task (heaptrack, issue 40). Capped at a year, so it fits.
                do { try await Task.sleep(nanoseconds: UInt64(min(wait, 31_536_000) * 1_000_000_000)) } catch { return }
            }
            // The slots of the runtime that built the feed's engine, whose waiter hands them back.
            guard !stopping, let generation = feeds[name]?.generation, let slots = runtimes[generation]?.slots else { return }
            do {
                // The sync runs in a child task: a task keeps the memory its frames grew into until
                // it ends, and this loop lives as long as the feed. Run here, each of 10,000 feeds
                // kept ~17 KB after its first sync; in a child, it is freed when the sync returns.
                // The slot is waited for here, and the child made only once it is held: at the
                // start every feed is due at once, and a child (with its task group) per feed
                // waiting in the queue made most of the daemon's peak memory (issue 40).
                try await slots.run(feed: name) {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { try await self.syncOnce(name) }
                        try await group.waitForAll()
                    }
                }
            } catch {
                return
            }
        }
    }

    private func syncOnce(_ name: String) async throws {
        guard let feed = feeds[name], !stopping else { throw CancellationError() }
        try Task.checkCancellation()
        feeds[name]?.syncing = true
        running[feed.generation, default: 0] += 1
        log.debug("sync_start", ["feed": name])
        metrics?.syncStarted()
        let began = Date()
        let result: Result<SyncReport, any Error>
        do {
            // Off the actor, as the sync's own work is: a busy sync keeps one thread, not the scheduler.
            if let busySeconds { await Self.spin(busySeconds) }
            // Another daemon sharing the store may have synced the feed since this one scheduled it.
            switch try await feed.engine.runIfDue(dueSince: feed.nextAt, progress: { [log] in log.skipped($0.skipped, feed: name) }) {
            case .synced(let report): result = .success(report)
            // Held: looked at again once the lease runs out, when a holder that died leaves it.
            case .heldUntil(let expiry): result = .failure(NotDue(lookAgain: max(expiry, Date()) + Self.leaseTick, held: true))
            // Synced by another: looked at again at its next attempt, as that daemon recorded it.
            case .syncedSince(let next):
                result = .failure(NotDue(lookAgain: next.flatMap { $0 > Date() ? $0 : nil } ?? Date() + feed.schedule.interval, held: false))
            }
        } catch {
            result = .failure(error)
        }
        running[feed.generation, default: 1] -= 1
        feeds[name]?.syncing = false
        switch result {
        case .success(let report): metrics?.syncFinished(feed: name, succeeded: true, seconds: report.seconds, report: report)
        case .failure(let error) where error is CancellationError || error is NotDue || Task.isCancelled: metrics?.syncAbandoned()
        case .failure: metrics?.syncFinished(feed: name, succeeded: false, seconds: Date().timeIntervalSince(began), report: nil)
        }
        await collectRuntimes()
        guard var latest = feeds[name] else { throw CancellationError() }

        switch result {
        case .success(let report):
            latest.failures = 0
            if let holder = report.tookOverLeaseFrom {
                // When this daemon planned the claim (ms since 1970), to compare with the lost lease's expiry.
                log.warn("stale_lease_taken_over", ["feed": name, "from": holder, "planned_ms": "\(Int64(feed.nextAt.timeIntervalSince1970 * 1000))"])
            }
            log.info("sync_done", ["feed": name, "new": "\(report.newPosts)", "updated": "\(report.updatedPosts)",
                                   "deleted": "\(report.deletedPosts)", "skipped": "\(report.skippedItems)",
                                   "videos": "\(report.videosResolved)", "pages": "\(report.pages)",
                                   "requests": "\(report.requests)", "ms": "\(Int(report.seconds * 1000))"])
        case .failure(let error) where error is CancellationError || Task.isCancelled:
            log.info("sync_cancelled", ["feed": name])
            throw CancellationError()
        case .failure(let notDue as NotDue):
            // Another daemon has the feed now or had it since: it schedules the next run, and this
            // one looks again when that lease runs out or at that next run, without counting a failure.
            latest.nextAt = notDue.lookAgain
            feeds[name] = latest
            scheduledHere.remove(name)
            log.debug("sync_skipped", ["feed": name, "reason": notDue.held ? "another daemon holds it" : "another daemon synced it",
                                       "next_attempt": notDue.lookAgain.formatted(.iso8601)])
            return
        case .failure:
            latest.failures += 1
        }
        var delay = latest.schedule.delay(afterConsecutiveFailures: latest.failures, using: &random)
        // What the server asked for (max-age, Retry-After) is a lower bound, never a speed-up.
        if let notBefore = politeBound(result) { delay = max(delay, notBefore.timeIntervalSinceNow) }
        if case .success(let report) = result, let stopped = report.polling?.stopped {
            latest.stopped = stopped
            feeds[name] = latest
            scheduledHere.remove(name)
            try? await current.store.setNextAttempt(nil, ofFeed: name)
            log.warn("feed_stopped", ["feed": name, "reason": stopped])
            throw CancellationError()
        }
        latest.nextAt = Date().addingTimeInterval(delay)
        if case .failure(let error) = result {
            log.error("sync_failed", ["feed": name, "failures": "\(latest.failures)", "error": describe(error),
                                      "next_attempt": latest.nextAt.formatted(.iso8601)])
        }
        feeds[name] = latest
        if (try? await current.store.setNextAttempt(latest.nextAt, ofFeed: name)) != nil { scheduledHere.insert(name) }
        log.debug("sync_scheduled", ["feed": name, "in_s": String(format: "%.1f", delay)])
    }

    /// Keeps this thread busy for `seconds`, deaf to cancellation: the test hook's stand-in
    /// for a long synchronous parse.
    @concurrent private static func spin(_ seconds: Double) async {
        let end = ContinuousClock.now + .seconds(seconds)
        var turns = 0
        while ContinuousClock.now < end { turns &+= 1 }
        withExtendedLifetime(turns) {}
    }

    /// A feed that another daemon holds, or synced since this one scheduled it.
    private struct NotDue: Error {
        /// When this daemon claims the feed again.
        var lookAgain: Date
        /// Held now (rather than synced since).
        var held: Bool
    }

    /// How long after another daemon's lease runs out this daemon claims the feed: the claim
    /// then finds the lease either renewed (its holder lives) or free to take over.
    static let leaseTick: TimeInterval = 0.5

    /// The earliest time the backend asked to be polled again, after a success or a rate limit.
    private func politeBound(_ result: Result<SyncReport, any Error>) -> Date? {
        switch result {
        case .success(let report): return report.polling?.notBefore
        case .failure(let error as ServiceError):
            if case .rateLimited(let until) = error.code { return until }
            return nil
        case .failure: return nil
        }
    }

    /// Tears down runtimes that no feed and no running sync uses any longer.
    private func collectRuntimes() async {
        // Only an earlier config can be unused; without one, skip the walk over every feed that
        // each sync's end would otherwise make (10,000 feeds: 10^8 steps for one round).
        guard runtimes.count > 1 else { return }
        let inUse = Set(feeds.values.map(\.generation)).union(running.filter { $0.value > 0 }.keys).union([generation])
        for (id, runtime) in runtimes where !inUse.contains(id) {
            runtimes[id] = nil
            await runtime.stop(keepingStore: true)
        }
    }
}
