import Core
import Foundation

/// The roles of the store a sync uses: it commits pages, keeps the video cache, the feed's
/// backend and its run records, sweeps, keeps the session, and holds the feed's lease.
public typealias SyncStore = PageCommitter & VideoCache & FeedSweeper & SyncRecorder & SessionKeeper & FeedLeases

/// Syncs one feed into the store: logs in or reuses the session, walks the pages from the
/// stored cursor, resolves the videos each page refers to, and commits each page.
///
/// It coordinates the services it is given and implements none of them, so it can be tested
/// with recording mocks in microseconds.
///
///     let engine = SyncEngine(feed: "home", services: services)
///     let report = try await engine.run()
///
/// - Important: A page is committed whole or not at all, together with its cursor; a failed
///   write therefore never advances the cursor, and a later run resumes from the last
///   committed page.
public struct SyncEngine: Sendable {
    /// The services one feed syncs with.
    public struct Services: Sendable {
        /// `nil` for a backend without a login: its pages are fetched with no session.
        public var authentication: (any AuthenticationService)?
        public var posts: any PostService
        public var videos: any VideoService
        public var store: any SyncStore
        /// Counts what the services put on the wire, for the report.
        public var requests: RequestCounter
        /// The posts backend's identity (``Core/FeedBackend/identity``): the feed's cursor and
        /// session are reused only while it stays the same.
        public var backend: String
        /// The account whose session the feed uses (``Core/FeedBackend/account``); `nil` gives
        /// the feed a session of its own.
        public var account: AccountKey?
        /// Removes what the feed's ``Options/retention`` no longer keeps; `nil`: nothing is removed.
        public var pruner: (any PostPruner)?

        public init(authentication: (any AuthenticationService)?, posts: any PostService, videos: any VideoService,
                    store: any SyncStore, requests: RequestCounter, backend: String = "", account: AccountKey? = nil,
                    pruner: (any PostPruner)? = nil) {
            self.pruner = pruner
            self.authentication = authentication
            self.posts = posts
            self.videos = videos
            self.store = store
            self.requests = requests
            self.backend = backend
            self.account = account
        }
    }

    /// Progress after each committed page.
    public struct Progress: Sendable {
        public var pages: Int
        public var posts: Int
        /// Items the page just committed had to drop, with their reasons.
        public var skipped: [SkippedItem]
    }

    public let feed: String
    let services: Services
    let options: Options
    let now: @Sendable () -> Date
    let sleep: @Sendable (TimeInterval) async throws -> Void
    let waiter: Waiter
    let sleepRenewing: @Sendable (TimeInterval) async throws -> Void

    /// - Parameters:
    ///   - now: the clock; injected so tests control expiry.
    ///   - sleep: waits out rate limits and backoff; injected so tests do not wait.
    ///   - waiter: hands the feed's sync slot back while the engine waits for a lease that
    ///     another process holds.
    ///   - sleepRenewing: waits out a rate limit or backoff of a login or refresh, which holds the
    ///     account's session lock; a plain sleep, so the daemon's slot is kept (see ``renew``).
    public init(feed: String, services: Services, options: Options = Options(),
                now: @escaping @Sendable () -> Date = Date.init,
                sleep: @escaping @Sendable (TimeInterval) async throws -> Void = { try await Task.sleep(for: .seconds($0)) },
                waiter: Waiter = .plain,
                sleepRenewing: @escaping @Sendable (TimeInterval) async throws -> Void = { try await Task.sleep(for: .seconds($0)) }) {
        self.feed = feed
        self.services = services
        self.options = options
        self.now = now
        self.sleep = sleep
        self.waiter = waiter
        self.sleepRenewing = sleepRenewing
    }

    /// Runs one sync and records its outcome in the store.
    ///
    /// - Parameters:
    ///   - full: start from the beginning of the feed instead of the stored cursor.
    ///   - progress: called after each committed page.
    /// - Throws: ``ServiceError`` from the step that failed (or `CancellationError`);
    ///   every page committed before it stays committed.
    public func run(full: Bool = false, progress: @Sendable (Progress) -> Void = { _ in }) async throws -> SyncReport {
        // Without `onlyIfDue` the lease is waited for, never declined.
        let (store, feed, holder) = (services.store, feed, options.lockHolder)
        guard let lease = try await acquireLease({ wait in
            try await store.acquireLease(onFeed: feed, holder: holder, wait: wait, onlyIfDue: false).map(LeaseClaim.acquired) ?? .heldUntil(Date())
        }).lease else {
            throw ServiceError(.locked, "syncing feed \(feed)", "the store declined the feed's lease")
        }
        return try await run(full: full, under: lease, progress: progress)
    }

    /// What a daemon's run (``runIfDue(dueSince:progress:)``) came to.
    public enum DueRun: Sendable, Hashable {
        /// This daemon synced the feed.
        case synced(SyncReport)
        /// Another daemon holds the feed; its lease runs out at this time unless renewed.
        case heldUntil(Date)
        /// Another daemon synced the feed since it was found due; its next attempt as recorded, if any.
        case syncedSince(nextAttempt: Date?)
    }

    /// The daemon's run: syncs the feed unless another daemon holds it or has synced it since
    /// this one found it due (several daemons may share a store), and says which.
    ///
    /// - Parameter dueSince: when this daemon found the feed due: a sync another daemon began
    ///   since then and finished successfully makes it not due (``FeedLeases``).
    /// - Returns: the report, or why the feed was not this daemon's to sync now: then nothing was
    ///   fetched or recorded.
    /// - Throws: as ``run(full:progress:)``; ``ServiceError`` `.locked` when another process
    ///   holds the feed's lease past ``Options/lockWait``.
    public func runIfDue(dueSince: Date = Date(), progress: @Sendable (Progress) -> Void = { _ in }) async throws -> DueRun {
        let (store, feed, holder) = (services.store, feed, options.lockHolder)
        switch try await acquireLease({ wait in try await store.claimLease(onFeed: feed, holder: holder, wait: wait, dueSince: dueSince) }) {
        case .acquired(let lease): return .synced(try await run(full: false, under: lease, progress: progress))
        case .heldUntil(let expiry): return .heldUntil(expiry)
        case .syncedSince(let next): return .syncedSince(nextAttempt: next)
        }
    }

    private func run(full: Bool, under lease: FeedLease, progress: @Sendable (Progress) -> Void) async throws -> SyncReport {
        let result: Result<SyncReport, any Error>
        do {
            result = .success(try await sync(full: full, under: lease, progress: progress))
        } catch {
            result = .failure(error)
        }
        // A store that gives the lease back with the run's record has done so already (``record(_:under:)``).
        if !(services.store is any RecordingRelease) { await services.store.release(lease) }
        var report = try result.get()
        report.tookOverLeaseFrom = lease.tookOverFrom
        return report
    }

    /// The feed's lease claimed at once if it is free; else waited for (up to ``Options/lockWait``)
    /// with the feed's sync slot handed back, as any other wait. Nothing is recorded when the
    /// lease cannot be had: the feed belongs to another process.
    private func acquireLease(_ claim: @escaping @Sendable (TimeInterval) async throws -> LeaseClaim) async throws -> LeaseClaim {
        do {
            return try await claim(0)
        } catch let error as ServiceError where error.code == .locked && options.lockWait > 0 {
            return try await waiter.handingBack { [wait = options.lockWait] in try await claim(wait) }
        }
    }

    /// The feed's videos: resolved with the video host, remembered in the store under `lease`.
    func videoResolution(under lease: FeedLease) -> VideoResolution {
        VideoResolution(lease: lease, cache: services.store, host: services.videos)
    }

    /// One sync under the feed's lease, its outcome recorded.
    private func sync(full: Bool, under lease: FeedLease, progress: @Sendable (Progress) -> Void) async throws -> SyncReport {
        let started = now()
        let requestsBefore = services.requests.value
        var report = SyncReport(feed: feed)
        do {
            // A cursor, validator or session of another backend means nothing to this one: walk
            // this one from the start and let go of what it no longer lists.
            let previousBackend = try await services.store.backend(ofFeed: feed)
            let swapped = previousBackend.map { $0 != services.backend } ?? false
            if swapped {
                options.log.notice("feed \(feed) now syncs from \(services.backend), no longer \(previousBackend ?? ""); "
                                   + "walking it from the start to replace the old mirror")
            }
            let fromStart = full || swapped
            let session = try await currentSession()
            report.videosResolved += try await videoResolution(under: lease).retryUnresolved(limit: options.unresolvedVideoRetryLimit)
            let cursor = fromStart ? nil : try await services.store.cursor(ofFeed: feed)
            // The posts a walk from the start sees, to find afterwards the ones the server dropped.
            var walk = fromStart ? FullWalk(feed: feed) : nil
            // The store is opened here from `any SyncStore` to its own type, whose pages are
            // prepared as its own ``PageCommitter/PreparedPage``.
            let sweep = try await commitPages(to: services.store, from: cursor, session: session, under: lease,
                                              sweepAtEnd: { swapped || (full && $0.missingMeansDeleted) },
                                              walk: &walk, report: &report, progress: progress)
            if sweep, let walk {
                try await FullWalkSweep(lease: lease, store: services.store, options: options).finish(walk, report: &report)
            }
            if let retention = options.retention, let pruner = services.pruner {
                report.prunedPosts = try await RetentionPass(pruner: pruner, lease: lease).run(retention, now: now())
            }
            report.requests = services.requests.value - requestsBefore
            report.seconds = now().timeIntervalSince(started)
            // The backend is recorded with the run, in its transaction (issue 40: one fewer per feed's first sync).
            try await record(SyncOutcome(startedAt: started, finishedAt: now(), report: report,
                                         backend: previousBackend != services.backend ? services.backend : nil), under: lease)
            return report
        } catch {
            let message = (error as? ServiceError)?.description ?? (error is CancellationError ? "cancelled" : "\(error)")
            report.requests = services.requests.value - requestsBefore
            // Recording the failure is best effort: the original error is what the caller needs.
            try? await record(SyncOutcome(startedAt: started, finishedAt: now(), error: message, report: report), under: lease)
            throw error
        }
    }

    /// Records how the run ended, the last thing a sync does under its lease: on a store that
    /// offers it (``Core/RecordingRelease``), in one transaction with giving the lease back, which
    /// the store then does whether or not the record is kept; a second record finds no lease.
    private func record(_ outcome: SyncOutcome, under lease: FeedLease) async throws {
        if let store = services.store as? any RecordingRelease {
            try await store.recordSync(outcome, releasing: lease)
        } else {
            try await services.store.recordSync(outcome, under: lease)
        }
    }
}
