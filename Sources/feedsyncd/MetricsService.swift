import App
import Core
import Foundation

/// Serves `/metrics` and `/healthz` on the configured address, and keeps what they answer
/// fresh: every few seconds it reads the feeds' statuses from the store (one query: with more
/// than ``smallConfig`` feeds, of those changed since, and every feed once in 5 minutes in pages)
/// and checks that the scheduler and the store answer.
///
/// The listener runs on a thread of its own and reads only the registry's memory, so a scrape
/// never waits for the store and a slow client never slows syncing. Its guarantees (see
/// ``HTTPListener``) keep `/healthz` answered while `/metrics` — megabytes with thousands of
/// feeds — is asked for by clients that never read it: a new connection takes the oldest one's
/// slot, and an answer the socket takes no byte of for 2 s is cut.
struct MetricsService: Service {
    let scheduler: Scheduler
    let registry: MetricsRegistry
    let listener: HTTPListener
    let log: Logger
    /// The listener's bounds: the defaults, but a minute for a whole answer rather than 10 s, as
    /// 110,000 feeds make a 186 MB page that a busy scraper read in 8-11 s (issue 40). A client
    /// that stops reading is still cut after 2 s, and one past the 64th still takes the oldest's slot.
    static let limits = HTTPListener.Limits(writeTimeout: .seconds(60))
    /// How often the store's figures and the health are refreshed.
    static let refreshInterval: Duration = .seconds(5)
    /// How long the scheduler and the store may take to answer before the daemon is unhealthy.
    static let answerBound: Duration = .seconds(5)

    var name: String { "metrics" }
    /// It reads the scheduler's runtime and store: it stops first, saying `stopping` meanwhile.
    var dependencies: [String] { ["scheduler", "runtime"] }

    /// The handler the listener calls for each `GET`: the registry's numbers, or the health.
    static func handler(_ registry: MetricsRegistry) -> @Sendable (HTTPListener.Request) -> HTTPListener.Response {
        { request in
            switch request.path {
            case "/metrics":
                return .init(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", stream: registry.render().body)
            case "/healthz":
                let health = registry.health(staleAfter: 3 * Double(refreshInterval.components.seconds))
                return .init(status: health.ok ? 200 : 503, body: (health.ok ? "ok" : health.reason) + "\n")
            default:
                return .init(status: 404, body: "not found: try /metrics or /healthz\n")
            }
        }
    }

    /// Up to this many feeds, every status is read at every refresh.
    static let smallConfig = 10_000
    /// With more feeds, a refresh reads the feeds changed since the one before (by the times
    /// the store recorded, this far back, for a commit that came a moment after its time),
    /// and every status only every this many refreshes (5 minutes): at 110,000 feeds, reading
    /// them all every 5 s cost each daemon's store a statement of 110,000 rows (issue 40).
    static let slack: TimeInterval = 10
    /// Every this many refreshes (5 minutes), a large config's read takes every status: with a
    /// full read once a minute, the status reads were 34 of the server's 266 s of statement time
    /// in the full cluster run of issue 40 (pg_stat_statements), and an idle daemon would go on
    /// reading 110,000 post counts a minute.
    static let fullEvery = 60

    /// Where the refreshes stand: when the last one that read the store began, and how many have.
    struct Progress {
        var readSince: Date?
        var count = 0
    }

    func run(until shutdown: GracefulShutdown) async {
        listener.start()
        log.info("metrics_listening", ["address": "\(listener.address.isIPv6 ? "[\(listener.address.host)]" : listener.address.host):\(listener.port)"])
        var progress = Progress()
        while !shutdown.isRequested && !Task.isCancelled {
            await refresh(&progress)
            if await shutdown.requested(within: Self.refreshInterval) { break }
        }
        registry.setHealth(ok: false, reason: "stopping")
        listener.stop()
    }

    /// Reads the statuses (every one, or those changed since the last read) and decides the health.
    private func refresh(_ progress: inout Progress) async {
        let scheduler = self.scheduler
        guard case .success(let runtime) = await Self.within(Self.answerBound, { await scheduler.currentRuntime }) else {
            return registry.setHealth(ok: false, reason: "the scheduler did not answer within \(Self.answerBound.components.seconds) s")
        }
        registry.setFeeds(runtime.feedNames)
        let store = runtime.store
        let began = Date()
        let large = runtime.feedNames.count > Self.smallConfig
        let since = large && progress.count % Self.fullEvery != 0 ? progress.readSince.map { $0.addingTimeInterval(-Self.slack) } : nil
        let statuses: Result<[FeedStatus], any Error>?
        if let since {
            statuses = await Self.within(Self.answerBound) { try await store.feedStatuses(changedSince: since) }
        } else if large {
            statuses = await Self.everyStatus(of: store, registry: registry)
        } else {
            statuses = await Self.within(Self.answerBound) { try await store.feedStatuses() }
        }
        switch statuses {
        case .some(.success(let statuses)):
            registry.update(statuses)
            progress.readSince = began
            progress.count += 1
            registry.setHealth(ok: true, reason: "ok")
        case .some(.failure(let error)):
            registry.setHealth(ok: false, reason: "the store does not answer: \(describe(error))")
        case .none:
            registry.setHealth(ok: false, reason: "the store did not answer within \(Self.answerBound.components.seconds) s")
        }
    }

    /// How many statuses a page of a full read holds, with more than ``smallConfig`` feeds.
    static let page = 5_000

    /// Every status, read and handed to the registry a page at a time, each page within
    /// ``answerBound``: 110,000 statuses read at once were some 80 MB for a moment (the driver's
    /// rows and the statuses), which the daemon's peak memory kept. Succeeds with nothing left to
    /// hand over: the registry has them all.
    private static func everyStatus(of store: any FeedStore, registry: MetricsRegistry) async -> Result<[FeedStatus], any Error>? {
        var after: String?
        while true {
            let from = after
            switch await within(answerBound, { try await store.feedStatuses(after: from, limit: page) }) {
            case .some(.success(let statuses)):
                registry.update(statuses)
                guard statuses.count == page, let last = statuses.last?.feed else { return .success([]) }
                after = last
            case let other:
                return other
            }
        }
    }

    /// `body`'s result, or `nil` when it takes longer than `bound` (it is then cancelled).
    private static func within<T: Sendable>(_ bound: Duration, _ body: @escaping @Sendable () async throws -> T) async -> Result<T, any Error>? {
        await withTaskGroup(of: Result<T, any Error>?.self) { group in
            group.addTask {
                do { return .success(try await body()) } catch { return .failure(error) }
            }
            group.addTask {
                try? await Task.sleep(for: bound)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
