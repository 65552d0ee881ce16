import App
import Core
import Foundation
import Sync

/// Follows the live sources of the feeds that stream, one connection per source key (server,
/// account, stream) shared by every feed that names it, and hands what arrives to each feed's
/// sync engine, which commits it as it commits a polled page (``Sync/LiveBatch``).
///
/// Never a gap: each time a connection opens (the first time and after every reconnect) it
/// runs each feed's ordinary incremental sync from the stored position, so what was published
/// while disconnected is fetched; duplicates are harmless. A connection that fails is tried
/// again after a wait of ``backoff``; after ``fallbackAfter`` failures in a row
/// (or at once, when the source refuses to connect) its feeds are shown as polling, and are
/// polled on their interval as every feed is, streaming or not.
actor LiveMirror {
    /// What the operator sees of a streaming feed: live since when, or polling and why.
    enum State: Sendable, Equatable {
        case connecting
        case live(since: Date)
        case polling(reason: String)
    }

    private struct Connection {
        var source: any LiveSource
        var feeds: [String]
        var task: Task<Void, Never>?
    }

    private let log: Logger
    private var runtime: Runtime?
    private var connections: [String: Connection] = [:]
    private(set) var states: [String: State] = [:]
    /// The store where each feed's state goes, for `feedsync status`.
    private var stateStore: (any LiveStateRecorder)?

    /// Failures in a row after which a connection's feeds are shown as polling.
    static let fallbackAfter = 5
    /// How long a connection must have worked for its failure to count as the first in a row.
    static let healthyAfter: TimeInterval = 30
    /// The wait before the next attempt after failures in a row: 1, 2, 4, … s, at most 5 minutes,
    /// drawn from the upper half, so the first retry after a working stream is quick.
    static let backoff = Backoff(first: 1, cap: 300, jitter: .upperHalf)

    /// Told whether each streaming feed is connected (`feedsync_stream_connected`).
    private let metrics: MetricsRegistry?

    init(log: Logger, metrics: MetricsRegistry? = nil) {
        self.log = log
        self.metrics = metrics
    }

    /// Starts, stops or re-points connections to match `runtime`'s feeds (at start and on SIGHUP).
    func apply(_ runtime: Runtime) async {
        self.runtime = runtime
        stateStore = runtime.store
        var wanted: [String: (any LiveSource, [String])] = [:]
        for feed in runtime.provider.feeds {
            guard let source = feed.live else { continue }
            wanted[source.connectionKey, default: (source, [])].1.append(feed.name)
        }
        for (key, connection) in connections where wanted[key] == nil {
            connection.task?.cancel()
            connections[key] = nil
            for feed in connection.feeds where !wanted.values.contains(where: { $0.1.contains(feed) }) {
                await setState(nil, of: feed)
            }
            log.info("live_stopped", ["stream": connection.source.description])
        }
        for (key, (source, feeds)) in wanted {
            if connections[key] != nil {
                connections[key]?.feeds = feeds
                continue
            }
            connections[key] = Connection(source: source, feeds: feeds)
            connections[key]?.task = Task { await self.follow(key) }
        }
    }

    /// Closes every connection, waits for each to end, and clears the feeds' live states.
    func stop() async {
        let tasks = connections.values.compactMap(\.task)
        tasks.forEach { $0.cancel() }
        for task in tasks { await task.value }
        for feed in connections.values.flatMap(\.feeds) { await setState(nil, of: feed) }
        connections.removeAll()
    }

    /// One connection's life: connect, catch up, write what arrives; on failure back off and again.
    private func follow(_ key: String) async {
        var failures = 0
        var random = SystemRandomNumberGenerator()
        while !Task.isCancelled, let connection = connections[key] {
            let source = connection.source
            var reached = false
            let started = Date()
            let outcome: (any Error)?
            do {
                try await run(key, source: source, reached: &reached)
                outcome = nil
            } catch {
                outcome = error
            }
            if Task.isCancelled { break }
            // A stream that opens and then breaks at once (a hostile one) still backs off: only a
            // connection that worked for a while starts the count afresh.
            failures = reached && Date().timeIntervalSince(started) >= Self.healthyAfter ? 1 : failures + 1
            let error = outcome.map(describe) ?? "the server closed the stream"
            var reason = error
            if let rejected = outcome as? ServiceError, rejected.code == .unauthorized,
               let refusal = await authenticationFailure(key) {
                // The same path as a poll: the sync renews the session when the backend can. It
                // could not, so the feed is polled (and fails the same way) until the token changes.
                reason = refusal
                failures = max(failures, Self.fallbackAfter)
            }
            if let refused = outcome as? ServiceError, refused.code == .refused {
                log.warn("live_refused", ["stream": source.description, "error": error])
                for feed in connections[key]?.feeds ?? [] { await setState(.polling(reason: refused.reason), of: feed) }
                return
            }
            let delay = Self.backoff.delay(afterFailures: failures, using: &random)
            log.warn("live_disconnected", ["stream": source.description, "error": error, "failures": "\(failures)",
                                           "retry_in_s": String(format: "%.1f", delay)])
            if failures >= Self.fallbackAfter {
                for feed in connections[key]?.feeds ?? [] { await setState(.polling(reason: reason), of: feed) }
            }
            do { try await Task.sleep(for: .seconds(delay)) } catch { break }
        }
    }

    /// One connection: open, catch up once open, then write batches until it ends.
    private func run(_ key: String, source: any LiveSource, reached: inout Bool) async throws {
        let queue = LiveQueue<LiveEvent>(overflow: ServiceError(.contractViolation, "following \(source.description)",
                                                                "the stream sent more than \(LiveQueue<LiveEvent>.defaultCapacity) events ahead of the store; reconnecting"))
        let stored = try await storedPositions(key)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { queue.finish() }
                for try await event in source.events(resumingFrom: stored) {
                    try queue.push(event)
                }
            }
            while let batch = try await queue.next() {
                var changes: [LiveEvent] = []
                for event in batch {
                    guard event == .connected else { changes.append(event); continue }
                    try await write(changes, key)
                    changes.removeAll()
                    log.info("live_connected", ["stream": source.description])
                    try await catchUp(key)
                    reached = true
                    for feed in connections[key]?.feeds ?? [] { await setState(.live(since: Date()), of: feed) }
                }
                try await write(changes, key)
            }
            try await group.waitForAll()
        }
    }

    /// The stream positions stored for the connection's feeds, for the source to resume from.
    private func storedPositions(_ key: String) async throws -> [String] {
        guard let reader = runtime?.store else { return [] }
        var positions: [String] = []
        for feed in connections[key]?.feeds ?? [] {
            if let position = try await reader.streamPosition(ofFeed: feed) { positions.append(position) }
        }
        return positions
    }

    /// After the stream's credentials were refused: runs the feeds' syncs, which go through the
    /// backend's authentication (a refresh, a new login) as a poll does.
    ///
    /// - Returns: the sync's refusal when it was refused too; `nil` when the sync went through
    ///   (the session was renewed), so the stream is tried again as after any failure.
    private func authenticationFailure(_ key: String) async -> String? {
        do {
            try await catchUp(key)
            return nil
        } catch let error as ServiceError where error.code == .unauthorized {
            return error.reason
        } catch {
            return nil
        }
    }

    /// Runs the incremental sync of every feed on the connection: what the stream missed.
    private func catchUp(_ key: String) async throws {
        guard let runtime else { return }
        for feed in connections[key]?.feeds ?? [] {
            let report = try await engine(feed, runtime).run()
            log.info("live_caught_up", ["feed": feed, "new": "\(report.newPosts)", "updated": "\(report.updatedPosts)",
                                        "pages": "\(report.pages)"])
        }
    }

    /// Hands a batch to every feed on the connection: each feed's sync engine commits it as a
    /// page, under the feed's lease, through the same writer as a polled page (Sync's
    /// `PageWriter`). The feed's cursor stays where its last sync put it.
    private func write(_ events: [LiveEvent], _ key: String) async throws {
        guard let runtime else { return }
        let batch = LiveBatch(events)
        guard !batch.isEmpty else { return }
        for feed in connections[key]?.feeds ?? [] {
            let engine: SyncEngine
            do {
                engine = try self.engine(feed, runtime)
            } catch is ConfigError {
                continue   // a reload (SIGHUP) removed the feed; its connection is being re-pointed
            }
            guard let report = try await engine.commit(batch, progress: { [log] in log.skipped($0.skipped, feed: feed) }) else { continue }
            metrics?.batchWritten(feed: feed, report: report)
            log.debug("live_written", ["feed": feed, "changes": "\(batch.page.changes.count)", "new": "\(report.newPosts)",
                                       "skipped": "\(report.skippedItems)"])
            if report.renamedAuthors > 0 { log.info("live_renamed", ["feed": feed, "authors": "\(report.renamedAuthors)"]) }
        }
    }

    private func engine(_ feed: String, _ runtime: Runtime) throws -> SyncEngine {
        var options = SyncEngine.Options()
        options.lockHolder = "feedsyncd"
        options.lockWait = runtime.daemon.lockWait
        return try runtime.engine(forFeed: feed, options: options)
    }

    private func setState(_ state: State?, of feed: String) async {
        guard states[feed] != state else { return }
        states[feed] = state
        switch state {
        case nil: metrics?.setStreamConnected(nil, feed: feed)
        case .live: metrics?.setStreamConnected(true, feed: feed)
        default: metrics?.setStreamConnected(false, feed: feed)
        }
        let shown: String?
        switch state {
        case nil: shown = nil
        case .connecting: shown = nil
        case .live(let since): shown = "live since \(since.formatted(.iso8601))"
        case .polling(let reason): shown = "polling: \(reason)"
        }
        if let shown { log.info("live_state", ["feed": feed, "state": shown]) }
        try? await stateStore?.setLiveState(shown, ofFeed: feed)
    }
}

/// Runs the live mirror as a service: follows the streams, and closes them when asked to stop.
struct LiveMirrorService: Service {
    let mirror: LiveMirror
    let scheduler: Scheduler

    var name: String { "live mirror" }
    /// Its streams write pages through the scheduler's store under the feeds' leases: it stops
    /// before the scheduler, and so before the heartbeat gives the leases back.
    var dependencies: [String] { ["scheduler", "runtime"] }

    func run(until shutdown: GracefulShutdown) async {
        await mirror.apply(await scheduler.currentRuntime)
        await shutdown.requested()
        await mirror.stop()
    }
}
