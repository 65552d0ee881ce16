import Core
import Foundation

/// Finds the feeds of many sites' pages (an OPML file's outlines with only an `htmlUrl`) within
/// bounds a person can rely on: an overall deadline, and a budget of requests to each host.
///
/// The sites of one host are looked at one after the other, in the order given (a lane per
/// host), and ``Bounds/lanes`` hosts at a time, so a file that lists one site many times, or
/// many pages of one site, never sends that host more than one request at once or more than
/// its budget in all. A site is skipped, not looked at, once its host's budget is spent; when
/// the deadline passes, what is under way is cancelled and every site not finished is skipped.
///
///     let discovery = SiteDiscovery(bounds: .init()) { site, gate, budget in
///         try await findFeed(of: site, gate: gate, budget: budget)   // WebFeedProbe.look, once or twice
///     }
///     for outcome in await discovery.run(sites) { … }
public struct SiteDiscovery: Sendable {
    /// The bounds of one import.
    public struct Bounds: Sendable, Equatable {
        /// How long all the sites may take together.
        public var deadline: Duration
        /// The most requests to one host (`host:port`), redirect hops included.
        public var requestsPerHost: Int
        /// How many hosts are looked at at once.
        public var lanes: Int

        /// The defaults: 2 minutes in all, 20 requests to one host, 8 hosts at once.
        public init(deadline: Duration = .seconds(120), requestsPerHost: Int = 20, lanes: Int = 8) {
            self.deadline = deadline
            self.requestsPerHost = requestsPerHost
            self.lanes = lanes
        }
    }

    /// Why a site was not looked at (or not to the end).
    public enum Skip: Sendable, Equatable {
        /// The requests its host (`host:port`) may be sent were spent.
        case budget(host: String)
        /// The import's deadline passed first.
        case deadline
    }

    /// What became of one site.
    public enum Outcome: Sendable {
        case found(URL)
        case failed(ServiceError)
        case skipped(Skip)
    }

    public let bounds: Bounds
    /// Finds the feed one page names, sending its requests through the gate and the budget.
    let find: @Sendable (_ site: URL, _ gate: HostGate, _ budget: DiscoveryBudget) async throws -> URL

    /// A discovery within `bounds`; `find` looks at one site, its requests going through the
    /// gate and the budget it is given (a ``DiscoveryBudget/Spent`` it throws skips the site).
    public init(bounds: Bounds, find: @escaping @Sendable (_ site: URL, _ gate: HostGate, _ budget: DiscoveryBudget) async throws -> URL) {
        self.bounds = bounds
        self.find = find
    }

    /// The outcome for each of `sites`, in the order given.
    public func run(_ sites: [URL]) async -> [Outcome] {
        guard !sites.isEmpty else { return [] }
        let budget = DiscoveryBudget(requestsPerHost: bounds.requestsPerHost)
        let gate = HostGate(maxInFlightPerHost: 1)
        var lanes: [[Int]] = []
        var laneOfHost: [String: Int] = [:]
        for (index, site) in sites.enumerated() {
            let host = DiscoveryBudget.host(of: site) ?? site.absoluteString
            if let lane = laneOfHost[host] {
                lanes[lane].append(index)
            } else {
                laneOfHost[host] = lanes.count
                lanes.append([index])
            }
        }
        enum Finished: Sendable {
            case lane([(Int, Outcome)])
            case deadline
            case early
        }
        var outcomes = [Outcome?](repeating: nil, count: sites.count)
        await withTaskGroup(of: Finished.self) { group in
            group.addTask { [deadline = bounds.deadline] in
                do { try await Task.sleep(for: deadline) } catch { return .early }
                return .deadline
            }
            var next = 0
            var running = 0
            func startLane() {
                guard next < lanes.count else { return }
                let lane = lanes[next]
                next += 1
                running += 1
                group.addTask { .lane(await self.walk(lane, of: sites, gate: gate, budget: budget)) }
            }
            for _ in 0..<max(1, bounds.lanes) { startLane() }
            var passed = false
            while let finished = await group.next() {
                switch finished {
                case .lane(let results):
                    for (index, outcome) in results { outcomes[index] = outcome }
                    running -= 1
                    if !passed { startLane() }
                    if running == 0 && (passed || next == lanes.count) { group.cancelAll() }
                case .deadline:
                    passed = true
                    group.cancelAll()
                case .early:
                    break
                }
            }
        }
        return outcomes.map { $0 ?? .skipped(.deadline) }
    }

    /// One host's sites, one after the other, until the budget or the deadline stops them.
    private func walk(_ lane: [Int], of sites: [URL], gate: HostGate, budget: DiscoveryBudget) async -> [(Int, Outcome)] {
        var results: [(Int, Outcome)] = []
        for index in lane {
            let site = sites[index]
            if Task.isCancelled { break }
            guard budget.allows(site) else {
                results.append((index, .skipped(.budget(host: DiscoveryBudget.host(of: site) ?? site.absoluteString))))
                continue
            }
            do {
                results.append((index, .found(try await find(site, gate, budget))))
            } catch let spent as DiscoveryBudget.Spent {
                results.append((index, .skipped(.budget(host: spent.host))))
            } catch {
                // The deadline shows as a cancellation; any other error is the site's own answer.
                if error is CancellationError { break }
                let failure = error as? ServiceError
                    ?? ServiceError(.unavailable, "finding a feed at \(Terminal.safe(site.absoluteString, limit: 200))", "\(error)")
                results.append((index, .failed(failure)))
            }
        }
        return results
    }
}
