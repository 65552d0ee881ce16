import App
import Core
import Foundation
import Sync

/// Runs every feed of the current config on its own schedule, at most `daemon.concurrency` at a
/// time (the runtime's ``Core/SyncSlots``), and swaps in a reloaded config without a restart.
///
/// Every feed's next run is a plan in one ``DueQueue``; one dispatcher task sleeps until the
/// earliest plan is due, takes a free slot, and only then picks the feed that gets it (a
/// takeover of a dead daemon's feed ahead of a backlog) and starts a task for that one sync.
/// A feed between syncs is an entry, not a task, so 100,000 feeds cost no 100,000 tasks (issue
/// 40); sleeping is a timer, so an idle daemon uses no CPU.
actor Scheduler {
    private struct Feed {
        var schedule: RetrySchedule
        /// Which runtime (config generation) the feed's next sync uses.
        var generation: Int
        var nextAt: Date
        var failures: Int
        var syncing = false
        /// Why the backend asked to stop polling (410 Gone); a reload starts the feed again.
        var stopped: String?
        /// The plan in the ``DueQueue`` that counts; earlier entries of the feed are dropped.
        var turn: UInt32 = 0
        /// Set when the last claim found the feed held by another daemon: the next claim is a
        /// takeover's, planned for just after the lease runs out, and goes ahead of the queue.
        var held: HeldLease?
        /// The turn whose plan the store found not synced by another daemon (``SyncedSinceCheck``):
        /// it goes to the claim without being asked about again.
        var checkedTurn: UInt32?
    }

    let log: Logger
    private var feeds: [String: Feed] = [:]
    private var queue = DueQueue()
    /// The syncs under way, by feed: the only tasks feeds have.
    private var syncs: [String: Task<Void, Never>] = [:]
    /// Sleeps until the earliest plan, takes slots and starts syncs.
    private var dispatcher: Task<Void, Never>?
    /// The dispatcher's sleep, and what it sleeps until: a plan made earlier than that wakes it.
    private var pause: (timer: Task<Void, Never>, until: Date)?
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
    /// Which feeds this daemon claims first, on a store it shares with other daemons.
    private let startOrder: StartOrder
    /// On a store shared with other daemons, looks every ``expiredLeaseLook`` for leases that ran
    /// out held (``ExpiredLeaseCheck``) and plans those feeds' takeovers.
    private var leaseWatch: Task<Void, Never>?

    /// - Parameter instance: this daemon's id in the store (``DaemonInstance/id``): on a store
    ///   several daemons share, it orders the first round (``StartOrder``).
    init(runtime: Runtime, log: Logger, busySeconds: Double? = nil, metrics: MetricsRegistry? = nil, instance: String? = nil) {
        self.log = log
        self.busySeconds = busySeconds
        self.metrics = metrics
        startOrder = StartOrder(seed: runtime.store is any SyncedSinceCheck ? instance : nil)
        runtimes[0] = runtime
    }

    private var current: Runtime { runtimes[generation]! }

    /// The runtime of the config now in force.
    var currentRuntime: Runtime { current }

    /// Requested when a reloaded config takes over from the current one (``apply(_:)``): a
    /// service that has nothing to do under this config (no `"media"`, no webhooks) waits for
    /// it rather than polling, so an idle daemon wakes for nothing.
    private var reloaded = GracefulShutdown()

    /// The runtime now in force and the moment it is replaced, read together so that no reload
    /// falls between the two.
    var currentRuntimeUntilReload: (runtime: Runtime, reloaded: GracefulShutdown) { (current, reloaded) }

    /// The store of the current config.
    var store: any FeedStore { current.store }

    var heartbeatInterval: TimeInterval { current.daemon.heartbeat }

    /// When a feed runs next, as this daemon plans it; for tests.
    func nextRun(of name: String) -> Date? { feeds[name]?.nextAt }

    /// How many syncs run now: the media archive fetches only while none does.
    var syncsUnderWay: Int { syncs.count }

    /// Starts every feed, resuming the failure counts the store remembers.
    func start() async {
        let failures = Dictionary((try? await current.store.feedStatuses())?.map { ($0.feed, $0.consecutiveFailures) } ?? [],
                                  uniquingKeysWith: { first, _ in first })
        let now = Date()
        // Sized once: a table grown one feed at a time is copied at each doubling and may end
        // up twice the size it needs (100,000 feeds, issue 40).
        feeds.reserveCapacity(current.provider.feeds.count)
        scheduledHere.reserveCapacity(current.provider.feeds.count)
        // On a shared store, each daemon in an order of its own, so three daemons starting together
        // do not all claim the same feed at once (issue 40); a dead daemon's feeds are then found by
        // the lease watch at their expiry, not when this daemon's walk comes to them.
        let configured = current.provider.feeds
        for index in startOrder.order(configured.count, name: { configured[$0].name }) {
            add(configured[index], failures: failures[configured[index].name] ?? 0, at: now)
        }
        restartDispatcher()
        if let check = current.store as? any ExpiredLeaseCheck { leaseWatch = Task { await self.watchLeases(check) } }
    }

    /// The graceful stop: starts no sync any more, cancels the syncs under way and waits for
    /// each to end; a page being committed finishes first (its transaction either commits or
    /// rolls back). The store stays open, for what stops after the scheduler (``close()``).
    func stop() async {
        stopping = true
        dispatcher?.cancel()
        leaseWatch?.cancel()
        pause?.timer.cancel()
        let tasks = Array(syncs.values)
        tasks.forEach { $0.cancel() }
        await dispatcher?.value
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
        // The new runtime is current from here: whoever waited for a reload may read it now.
        reloaded.request()
        reloaded = GracefulShutdown()
        let configured = Set(runtime.provider.feeds.map(\.name))
        for name in feeds.keys where !configured.contains(name) {
            syncs[name]?.cancel()
            feeds[name] = nil
            if scheduledHere.remove(name) != nil { try? await runtime.store.unschedule([name]) }
            log.info("feed_removed", ["feed": name])
        }
        let now = Date()
        for feedServices in runtime.provider.feeds {
            guard var feed = feeds[feedServices.name] else {
                add(feedServices, failures: 0, at: now)
                log.info("feed_added", ["feed": feedServices.name])
                continue
            }
            let schedule = makeSchedule(feedServices)
            feed.generation = generation
            var replan: Date?
            if feed.stopped != nil && !feed.syncing {
                // A stopped feed is polled again after a reload: if its config changed, the
                // backend starts afresh; if not, it stops again without a request.
                feed.stopped = nil
                replan = now
            } else if schedule != feed.schedule && !feed.syncing {
                // A shorter interval takes effect now rather than after the old, longer plan.
                replan = min(feed.nextAt, now.addingTimeInterval(schedule.interval))
            }
            feed.schedule = schedule
            feeds[feedServices.name] = feed
            if let replan { plan(feedServices.name, at: replan) }
        }
        // The dispatcher may wait for a slot of the replaced runtime: it waits for the new one's.
        restartDispatcher()
        await collectRuntimes()
    }

    private func add(_ feedServices: ServiceProvider.FeedServices, failures: Int, at now: Date) {
        feeds[feedServices.name] = Feed(schedule: makeSchedule(feedServices), generation: generation, nextAt: now, failures: failures)
        plan(feedServices.name, at: now)
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

    /// Plans the feed's next run at `at` (its `held` lease, if any, puts it in the takeover lane),
    /// and wakes the dispatcher if that is earlier than it sleeps.
    private func plan(_ name: String, at: Date) {
        guard var feed = feeds[name], !stopping else { return }
        feed.nextAt = at
        feed.turn &+= 1
        feeds[name] = feed
        queue.add(DueQueue.Entry(at: at, feed: name, turn: feed.turn), takeover: feed.held != nil)
        if queue.count > 2 * feeds.count + 1_024 { queue.compact(isCurrent: isCurrent) }
        if let pause, at < pause.until { pause.timer.cancel() }
    }

    /// Whether a plan is the feed's latest and the feed waits for it (not syncing, not stopped).
    private func isCurrent(_ entry: DueQueue.Entry) -> Bool {
        guard let feed = feeds[entry.feed] else { return false }
        return feed.turn == entry.turn && !feed.syncing && feed.stopped == nil
    }

    private func restartDispatcher() {
        dispatcher?.cancel()
        pause?.timer.cancel()
        guard !stopping else { return }
        dispatcher = Task { await self.dispatch() }
    }

    /// The one loop: sleep until a plan is due, take a slot of the current runtime, give it to
    /// the feed that goes first (``DueQueue/popDue(at:isCurrent:)``) in a task of its own.
    private func dispatch() async {
        while !Task.isCancelled && !stopping {
            guard let due = queue.earliest(isCurrent: isCurrent), due <= Date() else {
                await sleep(until: queue.earliest(isCurrent: isCurrent))
                continue
            }
            if let check = current.store as? any SyncedSinceCheck, await skipSyncedElsewhere(check) { continue }
            let slots = current.slots
            guard let slot = try? await slots.take() else { return }
            // Picked only now that the slot is held: a takeover that came due meanwhile goes first.
            guard !Task.isCancelled, !stopping, slots === current.slots,
                  let entry = queue.popDue(at: Date(), isCurrent: isCurrent) else {
                await slots.giveBack(slot)
                continue
            }
            start(entry.feed, in: slot, of: slots)
        }
    }

    /// The dispatcher's sleep until `date` (a year when nothing is planned), cut short by a plan
    /// made for earlier (``plan(_:at:)``) or by cancellation.
    private func sleep(until date: Date?) async {
        let until = date ?? Date().addingTimeInterval(31_536_000)
        // In nanoseconds rather than through a Clock, capped at a year so it fits.
        let nanoseconds = UInt64(min(max(until.timeIntervalSinceNow, 0), 31_536_000) * 1_000_000_000)
        let timer = Task<Void, Never> { try? await Task.sleep(nanoseconds: nanoseconds) }
        pause = (timer, until)
        await withTaskCancellationHandler { await timer.value } onCancel: { timer.cancel() }
        // A dispatcher replaced meanwhile (a reload) leaves its successor's sleep as it is.
        if pause?.timer == timer { pause = nil }
    }

    /// Starts one feed's sync in `slot`, in a task that ends with the sync (its memory with it).
    private func start(_ name: String, in slot: SyncSlots.Slot, of slots: SyncSlots) {
        feeds[name]?.syncing = true
        syncs[name] = Task {
            let planned = (try? await slots.run(feed: name, in: slot) { try await self.syncOnce(name) }) != nil
            self.finished(name, planned: planned)
        }
    }

    /// A sync has ended: the feed waits for its next plan, unless it stopped, went or the daemon stops.
    private func finished(_ name: String, planned: Bool) {
        syncs[name] = nil
        guard var feed = feeds[name] else { return }
        feed.syncing = false
        feeds[name] = feed
        if planned { plan(name, at: feed.nextAt) }
    }

    private func syncOnce(_ name: String) async throws {
        guard let feed = feeds[name], let runtime = runtimes[feed.generation], !stopping else { throw CancellationError() }
        try Task.checkCancellation()
        running[feed.generation, default: 0] += 1
        log.debug("sync_start", ["feed": name])
        metrics?.syncStarted()
        let began = Date()
        let result: Result<SyncReport, any Error>
        do {
            // Off the actor, as the sync's own work is: a busy sync keeps one thread, not the scheduler.
            if let busySeconds { await Self.spin(busySeconds) }
            // Another daemon sharing the store may have synced the feed since this one scheduled it.
            let due = feed.held?.dueSince ?? feed.nextAt
            switch try await engine(name, runtime).runIfDue(dueSince: due, progress: { [log] in log.skipped($0.skipped, feed: name) }) {
            case .synced(let report): result = .success(report)
            // Held: looked at again once the lease runs out, when a holder that died leaves it.
            case .heldUntil(let expiry):
                let held = HeldLease(expiry: expiry, decided: Date(), dueSince: feed.held?.dueSince ?? feed.nextAt)
                result = .failure(NotDue(lookAgain: max(held.expiry, held.decided) + Self.leaseTick, held: held))
            // Synced by another: looked at again at its next attempt, as that daemon recorded it.
            case .syncedSince(let next):
                result = .failure(NotDue(lookAgain: Self.lookAgain(next, every: feed.schedule.interval), held: nil))
            }
        } catch {
            result = .failure(error)
        }
        running[feed.generation, default: 1] -= 1
        switch result {
        case .success(let report): metrics?.syncFinished(feed: name, succeeded: true, seconds: report.seconds, report: report)
        case .failure(let error) where error is CancellationError || error is NotDue || Task.isCancelled: metrics?.syncAbandoned()
        case .failure: metrics?.syncFinished(feed: name, succeeded: false, seconds: Date().timeIntervalSince(began), report: nil)
        }
        await collectRuntimes()
        guard var latest = feeds[name] else { throw CancellationError() }
        // Held again (below), or this daemon's to plan now: either way the last claim's lease is past.
        latest.held = nil

        switch result {
        case .success(let report):
            latest.failures = 0
            if let holder = report.tookOverLeaseFrom { logTakeover(name, from: holder, planned: feed.nextAt, after: feed.held) }
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
            latest.held = notDue.held
            feeds[name] = latest
            leave(name, until: notDue.lookAgain, held: notDue.held != nil)
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

    /// Leaves a feed another daemon holds or synced to that daemon (it schedules the next run):
    /// this one looks again at `until`, without counting a failure.
    private func leave(_ name: String, until: Date, held: Bool) {
        feeds[name]?.nextAt = until
        scheduledHere.remove(name)
        log.debug("sync_skipped", ["feed": name, "reason": held ? "another daemon holds it" : "another daemon synced it",
                                   "next_attempt": until.formatted(.iso8601)])
    }

    /// Asks the store, in one look, which of the next due feeds not yet asked about another daemon
    /// synced since they came due, and leaves those as a claim answering `syncedSince` would, with
    /// no slot taken and no engine built; the others are marked asked, and go to the claim.
    ///
    /// - Returns: whether it asked (the queue may have changed meanwhile).
    private func skipSyncedElsewhere(_ check: any SyncedSinceCheck) async -> Bool {
        // Only once the plan up next is one not asked about: a batch is asked about at once.
        let ahead = queue.dueOrdinary(at: Date(), limit: Self.lookAhead, isCurrent: isCurrent)
        guard let next = ahead.first, feeds[next.feed]?.checkedTurn != next.turn else { return false }
        let asked = ahead.filter { feeds[$0.feed]?.checkedTurn != $0.turn }
        let due = asked.compactMap { entry in feeds[entry.feed].map { DueFeed(feed: entry.feed, since: $0.nextAt) } }
        // A failed look skips nothing: each feed is claimed, as without it.
        let synced = Dictionary((try? await check.feedsSynced(since: due))?.map { ($0.feed, $0.nextAttempt) } ?? [],
                                uniquingKeysWith: { first, _ in first })
        for entry in asked where isCurrent(entry) {
            guard let found = synced[entry.feed], let interval = feeds[entry.feed]?.schedule.interval else {
                feeds[entry.feed]?.checkedTurn = entry.turn
                continue
            }
            leave(entry.feed, until: Self.lookAgain(found, every: interval), held: false)
            plan(entry.feed, at: feeds[entry.feed]?.nextAt ?? Date())
        }
        return true
    }

    /// Every ``expiredLeaseLook``, asks the store which leases ran out while held, and plans each
    /// of those feeds this daemon has, idle and not yet planned as a takeover, for a takeover now.
    /// Without it a daemon learns that a lease is stale only by claiming the feed, and in an order
    /// of its own it may come to a dead daemon's feeds minutes after their leases ran out (137 s in
    /// the full cluster run of issue 40).
    private func watchLeases(_ check: any ExpiredLeaseCheck) async {
        while !Task.isCancelled && !stopping {
            try? await Task.sleep(for: Self.expiredLeaseLook)
            guard !Task.isCancelled, !stopping, let expired = try? await check.expiredLeases(limit: Self.expiredLeaseBatch) else { continue }
            let now = Date()
            for lease in expired { planTakeover(lease.feed, expiredAt: lease.expiry, now: now) }
        }
    }

    /// Plans a feed whose lease ran out held for a claim now, in the takeover lane, unless it syncs
    /// here, stopped, or already waits for a takeover. Found due when this daemon had planned it,
    /// or now if that is later: a run that another daemon ends meanwhile makes the claim decline.
    private func planTakeover(_ name: String, expiredAt expiry: Date, now: Date) {
        guard var feed = feeds[name], !feed.syncing, feed.stopped == nil, feed.held == nil else { return }
        feed.held = HeldLease(expiry: expiry, decided: now, dueSince: min(feed.nextAt, now))
        feeds[name] = feed
        plan(name, at: now)
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
