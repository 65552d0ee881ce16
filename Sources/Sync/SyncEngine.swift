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

        public init(authentication: (any AuthenticationService)?, posts: any PostService, videos: any VideoService,
                    store: any SyncStore, requests: RequestCounter, backend: String = "", account: AccountKey? = nil) {
            self.authentication = authentication
            self.posts = posts
            self.videos = videos
            self.store = store
            self.requests = requests
            self.backend = backend
            self.account = account
        }
    }

    /// Tunables with defaults that suit a real backend.
    public struct Options: Sendable {
        /// Refresh the session when it has less than this many seconds left.
        public var refreshMargin: TimeInterval = 60
        /// The longest a rate limit is waited out before the sync gives up: long enough for
        /// Mastodon's 5-minute window.
        public var maxRateLimitWait: TimeInterval = 900
        /// How many rate limits in a row are waited out before the sync gives up.
        public var maxRateLimitRetries = 5
        /// How many times a call that fails transiently is tried before the sync gives up.
        public var maxAttempts = 6
        /// The first retry waits up to this long; each further one up to twice as long.
        public var baseRetryDelay: TimeInterval = 0.25
        /// The longest a single retry waits.
        public var maxRetryDelay: TimeInterval = 8
        /// How many earlier unresolved videos each sync retries.
        public var unresolvedVideoRetryLimit = 200
        /// The largest fraction of a feed's cached posts a full sync may delete as gone.
        public var maxDeletionRatio = 0.5
        /// Delete whatever a full sync did not see, however much that is.
        public var forceDelete = false
        /// How long to wait for another process's lease on the feed.
        public var lockWait: TimeInterval = 30
        /// Who this sync is, for the lease message another process sees.
        public var lockHolder = "feedsync"
        /// Where the sync logs: each retry and rate-limit wait at `debug`, with its attempt and
        /// wait; what an operator should see while it happens (a wait for a rate limit, a
        /// backend that changed) as a notice.
        public var log: Logger = .disabled
        /// Told, in one sentence, about what an operator should see while it happens: ``log``'s
        /// notices. Setting it sets ``log`` to one that hands it every event from `info` up.
        public var notice: @Sendable (String) -> Void {
            get { { [log] in log.notice($0) } }
            set { log = Logger(sentences: newValue) }
        }

        public init() {}
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
        guard let report = try await run(full: full, onlyIfDue: false, progress: progress) else {
            throw ServiceError(.locked, "syncing feed \(feed)", "the store declined the feed's lease")
        }
        return report
    }

    /// The daemon's run: syncs the feed unless another daemon holds it or has synced it since
    /// this one scheduled it (several daemons may share a store).
    ///
    /// - Returns: `nil` when the feed was not due after all; nothing was fetched or recorded.
    /// - Throws: as ``run(full:progress:)``; ``ServiceError`` `.locked` when another process
    ///   holds the feed's lease past ``Options/lockWait``.
    public func runIfDue(progress: @Sendable (Progress) -> Void = { _ in }) async throws -> SyncReport? {
        try await run(full: false, onlyIfDue: true, progress: progress)
    }

    private func run(full: Bool, onlyIfDue: Bool, progress: @Sendable (Progress) -> Void) async throws -> SyncReport? {
        // Nothing is recorded when the lease cannot be had: the feed belongs to another process.
        guard let lease = try await acquireLease(onlyIfDue: onlyIfDue) else { return nil }
        let result: Result<SyncReport, any Error>
        do {
            result = .success(try await sync(full: full, under: lease, progress: progress))
        } catch {
            result = .failure(error)
        }
        await services.store.release(lease)
        var report = try result.get()
        report.tookOverLeaseFrom = lease.tookOverFrom
        return report
    }

    /// The feed's lease, at once if it is free; else waited for (up to ``Options/lockWait``)
    /// with the feed's sync slot handed back, as any other wait.
    private func acquireLease(onlyIfDue: Bool) async throws -> FeedLease? {
        let (store, feed, holder) = (services.store, feed, options.lockHolder)
        do {
            return try await store.acquireLease(onFeed: feed, holder: holder, wait: 0, onlyIfDue: onlyIfDue)
        } catch let error as ServiceError where error.code == .locked && options.lockWait > 0 {
            return try await waiter.handingBack { [wait = options.lockWait] in
                try await store.acquireLease(onFeed: feed, holder: holder, wait: wait, onlyIfDue: onlyIfDue)
            }
        }
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
                options.notice("feed \(feed) now syncs from \(services.backend), no longer \(previousBackend ?? ""); "
                               + "walking it from the start to replace the old mirror")
            }
            let fromStart = full || swapped
            let session = try await currentSession()
            report.videosResolved += try await retryUnresolvedVideos()
            let cursor = fromStart ? nil : try await services.store.cursor(ofFeed: feed)
            // The posts a walk from the start sees, to find afterwards the ones the server dropped.
            var walk = fromStart ? FullWalk(feed: feed) : nil
            // The requests this walk has made: one met again means the backend goes in circles.
            var requested: Set<String> = cursor.map { [$0.position] } ?? []
            // The next page is fetched and decoded meanwhile by a child task, from the cursor of
            // the one before it, so the feed is still read in order, one request at a time. A page
            // is applied only after the one before it has committed. The fetcher is a child of
            // this call: it ends with it, before the feed's lease is given back.
            let sweep = try await withThrowingTaskGroup(of: Void.self) { group in
                let pipeline = PagePipeline(capacity: Self.decodedPagesHeld)
                group.addTask { await fetchPages(from: cursor, session: session, into: pipeline) }
                defer { group.cancelAll() }
                while true {
                    try Task.checkCancellation()
                    let fetched = try await pipeline.take()
                    let page = fetched.page
                    let videos = try await resolveVideos(of: page, report: &report)
                    report.add(try await services.store.apply(fetched.prepared, videos: videos, under: lease))
                    await pipeline.committed()
                    walk?.note(page)
                    report.pages += 1
                    report.skippedItems += page.skipped.count
                    if let polling = page.polling { report.polling = polling }
                    progress(Progress(pages: report.pages, posts: report.newPosts + report.updatedPosts + report.unchangedPosts,
                                      skipped: page.skipped))
                    guard page.hasMore else { return swapped || (full && page.missingMeansDeleted) }
                    guard requested.insert(page.nextRequest).inserted else {
                        throw ServiceError(.contractViolation, "reading feed \(feed)",
                                           "the backend sent a cursor it had already sent in this sync (\(Terminal.safe(page.nextRequest, limit: 120))), "
                                           + "so its pages go in circles; the \(report.pages) pages read are kept")
                    }
                }
            }
            if sweep, let walk {
                report.walkedToSweep = true
                if let item = walk.unidentified {
                    // The skipped item may be a stored post the server still lists: delete nothing.
                    let withheld = "nothing was deleted as gone, since an item was skipped without an id "
                        + "(\(Terminal.safe(item.reason, limit: 120))), so the walk cannot tell which posts the server still lists"
                    report.sweepWithheld = withheld
                    options.notice("feed \(feed): \(withheld)")
                } else {
                    report.deletedPosts += try await sweepUnseenPosts(of: walk)
                }
            }
            if previousBackend != services.backend { try await services.store.setBackend(services.backend, ofFeed: feed) }
            report.requests = services.requests.value - requestsBefore
            report.seconds = now().timeIntervalSince(started)
            try await services.store.recordSync(SyncOutcome(startedAt: started, finishedAt: now(), report: report), ofFeed: feed)
            return report
        } catch {
            let message = (error as? ServiceError)?.description ?? (error is CancellationError ? "cancelled" : "\(error)")
            report.requests = services.requests.value - requestsBefore
            // Recording the failure is best effort: the original error is what the caller needs.
            try? await services.store.recordSync(SyncOutcome(startedAt: started, finishedAt: now(), error: message, report: report),
                                                 ofFeed: feed)
            throw error
        }
    }

    /// After a full walk, deletes the cached posts the server no longer has, unless that would
    /// delete more than ``Options/maxDeletionRatio`` of the feed: a server that suddenly
    /// answers with an empty feed must not wipe the cache.
    private func sweepUnseenPosts(of walk: FullWalk) async throws -> Int {
        let (unseen, cached) = try await services.store.unseenPosts(of: walk)
        let ratio = cached == 0 ? 0 : Double(unseen) / Double(cached)
        guard unseen == 0 || ratio <= options.maxDeletionRatio || options.forceDelete else {
            throw ServiceError(.refused, "finishing the full sync of feed \(feed)",
                               "it would delete \(unseen) of \(cached) cached posts (\(Int((ratio * 100).rounded()))%), more than the "
                               + "\(Int((options.maxDeletionRatio * 100).rounded()))% allowed; nothing was deleted. If the server really "
                               + "lost them, run `feedsync pull --full --force-delete`")
        }
        return unseen > 0 ? try await services.store.deleteUnseenPosts(of: walk) : 0
    }

    /// The account whose session the feed uses; without one named, the feed's own.
    private var account: AccountKey {
        services.account ?? AccountKey(integration: "feed", server: services.backend, account: feed)
    }

    /// The account's stored session when it is still good, else a renewed one; `nil` for a
    /// backend without a login.
    private func currentSession() async throws -> Session? {
        guard services.authentication != nil else { return nil }
        // The feed's own session from before sessions belonged to accounts, taken at its first
        // sync: it becomes the account's if the account has none yet.
        let former = try await services.store.takeFormerSession(ofFeed: feed, backend: services.backend)
        let stored = try await services.store.session(of: account)
        if let stored, stored.isUsable(at: now(), margin: options.refreshMargin) { return stored }
        return try await renew(stored, logInAgain: false, former: former)
    }

    /// A good session for the account in place of `seen` (spent, rejected, or none): refreshed
    /// (falling back to a login when the refresh is refused), or, with `logInAgain`, from a new
    /// login.
    ///
    /// Renewals of one account take turns under the store's session lock (in this process and
    /// between processes), and each first reads the stored session again: one that another feed
    /// or process renewed meanwhile is used as it is. So N feeds of an account log in once, and a
    /// refresh token that rotates is never spent twice.
    ///
    /// - Important: A wait inside a renewal keeps the daemon's concurrency slot (``sleepRenewing``).
    ///   Feeds queued on the account's lock hold slots; a renewal that gave its slot back to wait
    ///   might find them all taken by those feeds when it wanted it again, and wait forever.
    private func renew(_ seen: Session?, logInAgain: Bool, former: Session? = nil) async throws -> Session {
        let lock = try await services.store.lockSession(of: account, wait: options.lockWait)
        do {
            let fresh = try await renewHoldingLock(seen, logInAgain: logInAgain, former: former)
            await services.store.unlockSession(lock)
            return fresh
        } catch {
            await services.store.unlockSession(lock)
            throw error
        }
    }

    private func renewHoldingLock(_ seen: Session?, logInAgain: Bool, former: Session?) async throws -> Session {
        guard let authentication = services.authentication else {
            throw ServiceError(.unauthorized, "renewing the session of feed \(feed)", "its backend has no login")
        }
        var stored = try await services.store.session(of: account)
        let adopted = stored == nil && former != nil
        if adopted { stored = former }
        if let stored, stored != seen, stored.isUsable(at: now(), margin: options.refreshMargin) {
            if adopted { try await services.store.saveSession(stored, of: account) }
            return stored
        }
        // The same retries, waiting with ``sleepRenewing``.
        let holding = SyncEngine(feed: feed, services: services, options: options, now: now, sleep: sleepRenewing, sleepRenewing: sleepRenewing)
        var renewed: Session?
        if let stored, stored.refreshToken != nil, !(logInAgain && stored == seen) {
            do {
                renewed = try await holding.withRetries { try await authentication.refresh(stored) }
            } catch let error as ServiceError where error.code == .unauthorized {
                renewed = nil
            }
        }
        let fresh: Session
        if let renewed {
            fresh = renewed
        } else {
            fresh = try await holding.withRetries { try await authentication.logIn() }
        }
        try await services.store.saveSession(fresh, of: account)
        return fresh
    }

    /// A fetched page, prepared for the store, and the session that fetched it.
    struct Fetched: Sendable {
        let prepared: any PreparedPage
        let session: Session?
        var page: FeedPage { prepared.page }
    }

    /// How many decoded pages a sync holds at most, the one committing included: the one
    /// committing and the next, fetched and decoded meanwhile. Enough to keep the network and
    /// the store busy at once, few enough to keep memory flat.
    static let decodedPagesHeld = 2

    /// The fetcher: fetches and prepares pages from `cursor` on, in order, handing each to
    /// `pipeline`, until a page says it is the last, the pipeline is cancelled, or a fetch
    /// fails (the failure goes down the pipeline to the committing side).
    private func fetchPages(from cursor: FeedCursor?, session: Session?, into pipeline: PagePipeline) async {
        var cursor = cursor
        var session = session
        do {
            while true {
                try await pipeline.reserve()
                let fetched = try await fetchPage(after: cursor, session: session)
                await pipeline.put(fetched)
                guard fetched.page.hasMore else { return }
                (cursor, session) = (fetched.page.nextCursor, fetched.session)
            }
        } catch {
            await pipeline.fail(error)
        }
    }

    /// Fetches a page and prepares it for the store, returning the session that worked. A rejected token is answered by one refresh, then one new login, then
    /// the error: no retry storm against a server that refuses the credentials.
    private func fetchPage(after cursor: FeedCursor?, session: Session?) async throws -> Fetched {
        var session = session
        var renewals = 0
        while true {
            do {
                let current = session
                let page = try await withRetries { try await services.posts.page(after: cursor, session: current) }
                return Fetched(prepared: services.store.prepare(page), session: session)
            } catch let error as ServiceError where error.code == .unauthorized && renewals < 2 {
                // Without a login there is nothing to renew: the backend's refusal stands.
                guard let current = session, services.authentication != nil else { throw error }
                renewals += 1
                session = try await renew(current, logInAgain: renewals == 2)
            }
        }
    }

    /// Runs a backend call, waiting out rate limits and retrying transient failures
    /// (unreachable, 5xx, truncated or malformed answers) with exponential backoff and full
    /// jitter, within the budget of ``Options/maxAttempts``.
    private func withRetries<T>(_ call: () async throws -> T) async throws -> T {
        var failures = 0
        var rateLimitWaits = 0
        while true {
            do {
                return try await call()
            } catch let error as ServiceError {
                switch error.code {
                case .rateLimited(let until) where rateLimitWaits < options.maxRateLimitRetries:
                    let wait = max(0, until.map { $0.timeIntervalSince(now()) } ?? 1)
                    guard wait <= options.maxRateLimitWait else { throw error }
                    rateLimitWaits += 1
                    logRetry(error, attempt: rateLimitWaits, wait: wait)
                    if wait >= 1 { options.notice("\(error.operation): rate limited; waiting \(Int(wait.rounded(.up))) s as the server asks") }
                    try await sleep(wait)
                case .unavailable, .invalidResponse:
                    failures += 1
                    guard failures < options.maxAttempts else {
                        throw ServiceError(error.code, error.operation, "\(error.reason); gave up after \(failures) attempts")
                    }
                    let ceiling = min(options.maxRetryDelay, options.baseRetryDelay * pow(2, Double(failures - 1)))
                    let wait = Double.random(in: 0...ceiling)
                    logRetry(error, attempt: failures, wait: wait)
                    try await sleep(wait)
                default:
                    throw error
                }
            }
        }
    }

    /// Logs a retry at `debug`: which call failed how, the how-manyth retry of its kind this is
    /// (`attempt` 1 is the first retry) and how long it waits first.
    private func logRetry(_ error: ServiceError, attempt: Int, wait: TimeInterval) {
        options.log.debug("retry", ["feed": feed, "operation": error.operation, "attempt": "\(attempt)",
                                    "wait_ms": "\(Int((wait * 1000).rounded()))", "reason": error.reason])
    }

    /// Resolves the videos the store does not hold yet. A host failure leaves them unresolved
    /// (the posts are stored regardless) and they are retried on a later sync.
    private func resolveVideos(of page: FeedPage, report: inout SyncReport) async throws -> [Video] {
        let ids = page.referencedVideoIDs
        guard !ids.isEmpty else { return [] }
        let unresolved = try await services.store.videosToResolve(among: ids, inFeed: feed)
        // Videos that came with the page are stored as they came (an unchanged row is not
        // rewritten); only the others are asked of the video host.
        let referenced = Set(ids)
        let carried = page.videos.filter { referenced.contains($0.id) }
        let carriedIDs = Set(carried.map(\.id))
        report.videosResolved += unresolved.filter { carriedIDs.contains($0) }.count
        let wanted = unresolved.filter { !carriedIDs.contains($0) }
        guard !wanted.isEmpty else { return carried }
        let found: [Video]
        do {
            found = try await services.videos.videos(withIDs: wanted)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            found = []
        }
        let wantedSet = Set(wanted)
        let resolved = found.filter { wantedSet.contains($0.id) }
        report.videosResolved += resolved.count
        report.videosUnresolved += wanted.count - resolved.count
        return carried + resolved
    }

    /// Gives videos that earlier syncs could not resolve another chance.
    private func retryUnresolvedVideos() async throws -> Int {
        let ids = try await services.store.unresolvedVideoIDs(inFeed: feed, limit: options.unresolvedVideoRetryLimit)
        guard !ids.isEmpty else { return 0 }
        let found: [Video]
        do {
            found = try await services.videos.videos(withIDs: ids)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return 0   // still unresolvable; a later sync tries again
        }
        guard !found.isEmpty else { return 0 }
        let wanted = Set(ids)
        let resolved = found.filter { wanted.contains($0.id) }
        _ = try await services.store.saveVideos(resolved, inFeed: feed)
        return resolved.count
    }
}
