import Core
import Foundation
import Synchronization

/// The daemon's numbers, kept in memory and rendered in Prometheus's text exposition format
/// 0.0.4 for `GET /metrics`.
///
/// Syncs, requests and waits are counted as they happen; what the store knows per feed (posts
/// stored, last success, failures in a row) is a snapshot the daemon refreshes every few
/// seconds with one query, so a scrape never touches the store.
///
///     let metrics = MetricsRegistry(version: feedsyncVersion)
///     metrics.syncFinished(feed: "home", succeeded: true, seconds: 0.4, report: report)
///     let page = metrics.render()       // made while the listener sends it: `page.body`
public final class MetricsRegistry: TrafficObserver, Sendable {
    /// Upper bounds of the sync duration histogram, in seconds.
    public static let durationBuckets: [Double] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900]
    /// The most distinct hosts counted by name; further hosts are counted as `"other"`.
    public static let maxHosts = 1000

    struct Histogram {
        /// Each bucket's count, cumulative, inline in the feed's numbers: an array a feed cost
        /// about 150 bytes of heap for each of 100,000 feeds (issue 40). 4 billion syncs of one
        /// feed are more than a daemon runs; a bucket stops there rather than wrap.
        var counts = InlineArray<13, UInt32>(repeating: 0)
        var sum = 0.0
        var count = 0

        mutating func observe(_ seconds: Double) {
            for (index, bound) in MetricsRegistry.durationBuckets.enumerated() where seconds <= bound && counts[index] < .max {
                counts[index] += 1
            }
            sum += seconds
            count += 1
        }
    }

    struct FeedNumbers {
        var ok = 0
        var failed = 0
        var durations = Histogram()
        /// Posts written, by operation: three numbers inline rather than a dictionary a feed,
        /// which cost about 160 bytes for each of 100,000 feeds (issue 40).
        var written = Written()
        var skipped = 0
        var filtered = 0
        var posts: Int?
        var lastSuccess: Date?
        var failures = 0
        var streamConnected: Bool?

        /// Adds what a sync, or a live stream's batch, wrote and skipped.
        mutating func count(_ report: SyncReport) {
            written.insert += report.newPosts
            written.update += report.updatedPosts
            written.delete += report.deletedPosts
            skipped += report.skippedItems
            filtered += report.filteredPosts
        }
    }

    struct Written {
        var insert = 0
        var update = 0
        var delete = 0

        /// The count of `op` as the exposition names it (`insert`, `update`, `delete`).
        subscript(op: String) -> Int {
            switch op {
            case "insert": insert
            case "update": update
            case "delete": delete
            default: 0
            }
        }
    }

    struct State {
        var feeds = FeedTable<FeedNumbers>()
        /// Feeds of the config in force, in config order; others are dropped from the output.
        var order: [String] = []
        var requests: [String: [String: Int]] = [:]
        var waits: [String: Int] = [:]
        /// Webhook delivery attempts, by outcome: delivered, retried, given_up.
        var webhooks: [String: Int] = [:]
        var syncsInFlight = 0
        /// Bumped by every change the exposition shows, so an unchanged one is not rendered again.
        var generation = 0
        var health: (ok: Bool, reason: String) = (false, "starting")
        var healthCheckedAt = Date()
    }

    let state = Mutex(State())
    /// The last page of at most ``cachedBytes`` made whole, without the process's own figures,
    /// and its generation: served again while nothing it shows has changed.
    let rendered = Mutex<(generation: Int, bytes: [UInt8])?>(nil)
    /// The largest page kept for the next scrape (10,000 feeds make about 18 MB; 100,000 make
    /// 159 MB or more, which is sent as it is made and not kept).
    static let cachedBytes = 32 << 20
    let version: String
    private let startTime: Double
    /// Whether the store hands out leases (PostgreSQL): then `feedsync_leases_held` is shown.
    let leasing = Atomic(false)
    /// Whether each feed's numbers are kept: not by a daemon that serves no `/metrics`, where
    /// nothing would ever show them (``prepareFeeds(_:shown:)``).
    private let keepsFeeds = Atomic(true)
    /// The media archive's counts, when it is on (`MetricsRegistry+Media`).
    let media = Mutex<MediaSummary?>(nil)

    public init(version: String, startTime: Date = ProcessStats.startTime ?? Date()) {
        self.version = version
        self.startTime = startTime.timeIntervalSince1970
    }

    /// Says whether the store hands out a lease per sync (PostgreSQL).
    public func setLeasing(_ leasing: Bool) { self.leasing.store(leasing, ordering: .relaxed) }

    /// Readies the numbers of `count` feeds at once, or, when nothing will show them (no
    /// `/metrics` listener), keeps none: a table grown one feed at a time ends up to twice the
    /// size it needs, and is copied while it grows (issue 40: 100,000 feeds).
    public func prepareFeeds(_ count: Int, shown: Bool) {
        keepsFeeds.store(shown, ordering: .relaxed)
        state.withLock { state in
            if shown { state.feeds.reserveCapacity(count) } else { state.feeds = FeedTable() }
        }
    }

    // MARK: What happens

    /// The feeds of the config now in force, in config order.
    public func setFeeds(_ names: [String]) {
        state.withLock { state in
            guard state.order != names else { return }
            state.generation += 1
            state.order = names
            for name in names where state.feeds[name] == nil { state.feeds[name] = FeedNumbers() }
            // Dropped in place: a filtered copy of 100,000 feeds' numbers was 50 MB more for a moment.
            let kept = Set(names)
            for gone in state.feeds.feeds.filter({ !kept.contains($0) }) { state.feeds[gone] = nil }
        }
    }

    public func syncStarted() {
        state.withLock {
            $0.syncsInFlight += 1
            $0.generation += 1
        }
    }

    /// A sync of `feed` ended: counted as `ok` or `failed`, its duration observed, and what it
    /// wrote added up by operation.
    public func syncFinished(feed: String, succeeded: Bool, seconds: Double, report: SyncReport?) {
        state.withLock { state in
            state.generation += 1
            state.syncsInFlight = max(0, state.syncsInFlight - 1)
            guard keepsFeeds.load(ordering: .relaxed) else { return }
            var numbers = state.feeds[feed] ?? FeedNumbers()
            if succeeded {
                numbers.ok += 1
                numbers.lastSuccess = Date()
                numbers.failures = 0
            } else {
                numbers.failed += 1
                numbers.failures += 1
            }
            let observed = seconds.isFinite ? max(0, seconds) : 0
            numbers.durations.observe(observed)
            if let report { numbers.count(report) }
            state.feeds[feed] = numbers
        }
    }

    /// A live stream's batch was committed to `feed`: what it wrote and skipped is added up as
    /// a sync's is (it is no sync: the sync counts and durations stay).
    public func batchWritten(feed: String, report: SyncReport) {
        state.withLock { state in
            guard state.feeds[feed] != nil else { return }
            state.generation += 1
            state.feeds[feed]?.count(report)
        }
    }

    /// A sync ended without running (cancelled, or another daemon had the feed).
    public func syncAbandoned() {
        state.withLock {
            $0.syncsInFlight = max(0, $0.syncsInFlight - 1)
            $0.generation += 1
        }
    }

    /// What the store knows about each feed, read by the daemon every few seconds.
    public func update(_ statuses: [FeedStatus]) {
        state.withLock { state in
            for status in statuses {
                guard let old = state.feeds[status.feed] else { continue }
                var numbers = old
                numbers.posts = status.postCount
                if let stored = status.lastSuccessAt, stored > (numbers.lastSuccess ?? .distantPast) { numbers.lastSuccess = stored }
                numbers.failures = status.consecutiveFailures
                guard numbers.posts != old.posts || numbers.lastSuccess != old.lastSuccess || numbers.failures != old.failures else { continue }
                state.feeds[status.feed] = numbers
                state.generation += 1
            }
        }
    }

    /// Whether `feed`'s live stream is connected (`nil`: the feed does not stream).
    public func setStreamConnected(_ connected: Bool?, feed: String) {
        state.withLock {
            guard $0.feeds[feed]?.streamConnected != connected else { return }
            $0.feeds[feed]?.streamConnected = connected
            $0.generation += 1
        }
    }

    /// What `GET /healthz` answers: healthy, or the one-line reason it is not.
    public func setHealth(ok: Bool, reason: String) {
        state.withLock {
            $0.health = (ok, reason)
            $0.healthCheckedAt = Date()
        }
    }

    /// The health last set, unless it is older than `stale`: then the daemon's own checks have
    /// stopped turning, and that is the reason.
    public func health(staleAfter stale: TimeInterval, now: Date = Date()) -> (ok: Bool, reason: String) {
        state.withLock { state in
            let age = now.timeIntervalSince(state.healthCheckedAt)
            if age > stale { return (false, "the daemon has not checked its scheduler and store for \(Int(age)) s") }
            return state.health
        }
    }

    public func requestFinished(host: String, status: Int?) {
        let code = status.map(String.init) ?? "error"
        state.withLock { state in
            let key = state.requests[host] != nil || state.requests.count < Self.maxHosts ? host : "other"
            state.requests[key, default: [:]][code, default: 0] += 1
            state.generation += 1
        }
    }

    public func rateLimitWait(host: String) {
        state.withLock { state in
            let key = state.waits[host] != nil || state.waits.count < Self.maxHosts ? host : "other"
            state.waits[key, default: 0] += 1
            state.generation += 1
        }
    }

    /// A webhook delivery attempt ended: `delivered` (2xx), `retried` (failed, due again later)
    /// or `given_up` (failed too often, or its webhook is gone from the config).
    public func webhookAttempted(_ outcome: String) {
        state.withLock {
            $0.webhooks[outcome, default: 0] += 1
            $0.generation += 1
        }
    }

    // MARK: The exposition

    /// Every metric in the text exposition format 0.0.4, as a page made while it is sent
    /// (``MetricsPage``): with thousands of feeds it is megabytes, and with 100,000 more than a
    /// daemon should hold.
    public func render(process: ProcessStats = .current()) -> MetricsPage {
        let generation = state.withLock { $0.generation }
        var tail = Exposition()
        tail.family("process_start_time_seconds", "gauge", "When the process started, in Unix seconds.")
        tail.sample("process_start_time_seconds", [], startTime)
        if let rss = process.residentBytes {
            tail.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")
            tail.sample("process_resident_memory_bytes", [], Double(rss))
        }
        if let fds = process.openDescriptors {
            tail.family("process_open_fds", "gauge", "Open file descriptors.")
            tail.sample("process_open_fds", [], Double(fds))
        }
        renderMedia(into: &tail)
        let cached = rendered.withLock { $0 }.flatMap { $0.generation == generation ? $0.bytes : nil }
        return MetricsPage(registry: self, generation: generation, cached: cached, tail: tail.bytes)
    }

    /// The families that are not per feed, after the feeds': requests, waits, webhooks, leases.
    func renderTotals(into out: inout Exposition) {
        let (requests, waits, webhooks, inFlight) = state.withLock { ($0.requests, $0.waits, $0.webhooks, $0.syncsInFlight) }
        out.family("feedsync_http_requests_total", "counter", "Requests the integrations sent, by host and status code (error: no answer).")
        for host in requests.keys.sorted() {
            for (code, count) in requests[host]!.sorted(by: { $0.key < $1.key }) {
                out.sample("feedsync_http_requests_total", [("host", host), ("code", code)], Double(count))
            }
        }
        out.family("feedsync_rate_limit_waits_total", "counter", "Waits for a server's request quota, by host.")
        for (host, count) in waits.sorted(by: { $0.key < $1.key }) {
            out.sample("feedsync_rate_limit_waits_total", [("host", host)], Double(count))
        }
        out.family("feedsync_webhook_deliveries_total", "counter", "Webhook delivery attempts, by outcome (delivered, retried, given_up).")
        for outcome in ["delivered", "retried", "given_up"] {
            out.sample("feedsync_webhook_deliveries_total", [("outcome", outcome)], Double(webhooks[outcome] ?? 0))
        }
        if leasing.load(ordering: .relaxed) {
            out.family("feedsync_leases_held", "gauge", "Feed leases this daemon holds now (one per sync under way).")
            out.sample("feedsync_leases_held", [], Double(inFlight))
        }
    }
}
