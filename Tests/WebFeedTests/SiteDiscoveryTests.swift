import Core
import Foundation
import Synchronization
import Testing
@testable import WebFeed

/// The bounds of finding many sites' feeds, over a mock that records what it was asked and
/// spends the budget as real requests would: one lane per host, a budget per host, a deadline.
@Suite struct SiteDiscoveryTests {
    /// Records each site looked at, and how many looks were under way at once per host.
    final class Recorder: Sendable {
        let looked = Mutex<[URL]>([])
        let answered = Mutex<Set<URL>>([])
        let inFlight = Mutex<[String: Int]>([:])
        let mostInFlight = Mutex<[String: Int]>([:])

        func begin(_ url: URL) {
            looked.withLock { $0.append(url) }
            let host = DiscoveryBudget.host(of: url)!
            let now = inFlight.withLock { $0[host, default: 0] += 1; return $0[host]! }
            mostInFlight.withLock { $0[host] = max($0[host, default: 0], now) }
        }

        func end(_ url: URL) { inFlight.withLock { $0[DiscoveryBudget.host(of: url)!, default: 0] -= 1 } }
    }

    /// A look that sends `requests` requests (the page, then its feed) through the budget, with a yield between.
    static func makeDiscovery(_ bounds: SiteDiscovery.Bounds, _ recorder: Recorder, requests: Int = 2,
                              hang: @escaping @Sendable (URL) -> Bool = { _ in false }) -> SiteDiscovery {
        SiteDiscovery(bounds: bounds) { site, _, budget in
            recorder.begin(site)
            defer { recorder.end(site) }
            for _ in 0..<requests {
                try budget.take(site)
                await Task.yield()
            }
            if hang(site) { try await Task.sleep(for: .seconds(3600)) }
            recorder.answered.withLock { _ = $0.insert(site) }
            guard !site.path.contains("none") else { throw ServiceError(.invalidResponse, "finding a feed", "the page names no feed") }
            return site.appendingPathComponent("feed.xml")
        }
    }

    /// Where the deadline is not the subject it is an hour away: at 2 minutes, a run of the whole
    /// suite at a load of 18 reached it before the last sites' looks.
    static let noDeadline = Duration.seconds(3600)

    static func urls(_ host: String, _ count: Int, from start: Int = 0) -> [URL] {
        (start..<(start + count)).map { URL(string: "http://\(host)/site/\($0)/")! }
    }

    @Test(arguments: [1, 2, 8])
    func everySiteIsLookedAtOnceInOrderAndOneHostOneAtATime(_ lanes: Int) async {
        let recorder = Recorder()
        let sites = Self.urls("a.example", 5) + Self.urls("b.example:8080", 3) + Self.urls("c.example", 1)
        let outcomes = await Self.makeDiscovery(.init(deadline: Self.noDeadline, requestsPerHost: 100, lanes: lanes), recorder).run(sites)
        #expect(outcomes.map(\.found) == sites.map { $0.appendingPathComponent("feed.xml") })
        #expect(recorder.looked.withLock { $0 }.count == sites.count)
        #expect(recorder.mostInFlight.withLock { $0 }.values.allSatisfy { $0 == 1 })
        // Within a host, the order of the file.
        let looked = recorder.looked.withLock { $0 }
        #expect(looked.filter { $0.host == "a.example" } == Self.urls("a.example", 5))
    }

    @Test(arguments: [(1, 0), (2, 1), (4, 2), (5, 2), (9, 4), (10, 5)] as [(Int, Int)])
    func aHostsSitesAreSkippedOnceItsBudgetIsSpent(_ budget: Int, _ found: Int) async {
        let recorder = Recorder()
        let sites = Self.urls("a.example", 5) + Self.urls("b.example", 1)
        let outcomes = await Self.makeDiscovery(.init(deadline: Self.noDeadline, requestsPerHost: budget), recorder).run(sites)
        let onA = outcomes.prefix(5)
        #expect(onA.filter { $0.found != nil }.count == found)
        // A site whose look ran out halfway is skipped too; no site of a spent host is looked at.
        #expect(onA.filter { $0.skip == .budget(host: "a.example:80") }.count == 5 - found)
        #expect(recorder.looked.withLock { $0 }.filter { $0.host == "a.example" }.count == min(5, (budget + 1) / 2))
        #expect((outcomes[5].found != nil) == (budget >= 2), "b.example has a budget of its own")
    }

    @Test func whatTheDeadlineCatchesIsSkippedAndWhatFinishedStays() async {
        let recorder = Recorder()
        let sites = Self.urls("fast.example", 3) + Self.urls("slow.example", 3) + Self.urls("none.example", 1).map { $0.appendingPathComponent("none") }
        let discovery = Self.makeDiscovery(.init(deadline: .seconds(3)), recorder) { $0.host == "slow.example" }
        let outcomes = await discovery.run(sites)
        // The slow host's first look never ends: it and the sites after it are skipped.
        #expect(outcomes[3..<6].allSatisfy { $0.skip == .deadline })
        #expect(recorder.looked.withLock { $0 }.filter { $0.host == "slow.example" }.count == 1, "the lane stopped at its first site")
        // Every look that had answered before the deadline keeps its answer (however many did).
        let answered = recorder.answered.withLock { $0 }
        for (site, outcome) in zip(sites, outcomes) where site.host != "slow.example" {
            if !answered.contains(site) {
                #expect(outcome.skip == .deadline)
            } else if site.host == "none.example" {
                if case .failed(let error) = outcome { #expect(error.reason == "the page names no feed") } else { Issue.record("\(outcome)") }
            } else {
                #expect(outcome.found == site.appendingPathComponent("feed.xml"))
            }
        }
    }

    @Test func noSitesIsNoWait() async {
        #expect(await Self.makeDiscovery(.init(deadline: Self.noDeadline), Recorder()).run([]).isEmpty)
    }
}

extension SiteDiscovery.Outcome {
    var found: URL? { if case .found(let url) = self { url } else { nil } }
    var skip: SiteDiscovery.Skip? { if case .skipped(let skip) = self { skip } else { nil } }
}
