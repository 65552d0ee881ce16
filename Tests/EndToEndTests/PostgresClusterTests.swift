import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PostgresTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Benchmarks/bench_cluster.py scaled down (issue 40): three `feedsyncd` on one PostgreSQL store
/// share 3,000 feeds, 2,700 web feeds and 300 custom-API feeds of three accounts, and each feed is
/// synced, never by two of them at once; each one's `/metrics` shows its share.
@Suite(.endToEnd, .needsPostgres) struct PostgresClusterTests {
    static let webFeeds = 2_700
    static let apiFeeds = 300
    static let accounts = 3
    /// Items per web feed and posts of the API's feed: every feed ends with exactly this many posts.
    static let postsPerFeed = 3

    /// The feed of each `sync_done` line of a daemon's log.
    static func syncsDone(_ log: String) -> [String] {
        log.split(separator: "\n").filter { $0.contains("event=sync_done ") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("feed=") }.map { String($0.dropFirst(5)) }
        }
    }

    /// The sum of `feedsync_syncs_total{…,outcome="ok"}` on the daemon's /metrics, read by curl.
    static func okSyncs(port: Int) async throws -> Int {
        let page = try await MetricsEndToEndTests.get("http://127.0.0.1:\(port)/metrics").stdout
        return page.split(separator: "\n").filter { $0.hasPrefix("feedsync_syncs_total{") && $0.contains(#",outcome="ok"} "#) }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
    }

    @Test func threeDaemonsShareThreeThousandFeedsAndSyncEachOnce() async throws {
        let database = try await PostgresServer.makeDatabase()
        let web = try ReferenceServer(script: "Fixtures/webfeed/server.py",
                                      arguments: ["--feeds", "\(Self.webFeeds)", "--items", "\(Self.postsPerFeed)"])
        let api = try ReferenceServer(posts: Self.postsPerFeed, extra: ["--users", "\(Self.accounts)"])
        let scratch = try Scratch()
        let (opml, _) = try await URLSession.shared.data(from: URL(string: "\(web.baseURL)/opml")!)
        try opml.write(to: scratch.folder.appendingPathComponent("web.opml"))
        // Accounts demo, demo2, demo3, as the server's --users names them; feed n belongs to account n % 3.
        let apiEntries = (0..<Self.apiFeeds).map { index in
            let user = index % Self.accounts == 0 ? "demo" : "demo\(index % Self.accounts + 1)"
            return """
                {"name": "api\(index)", "interval": "1h", "posts": {"integration": "httpapi", "baseURL": "\(api.baseURL)",
                 "username": "\(user)", "passwordEnv": "FEEDSYNC_PASSWORD"}}
                """
        }
        // One config a daemon, alike but for the port each serves /metrics on.
        let ports = try (0..<3).map { _ in try MetricsEndToEndTests.freePort() }
        let configs = try ports.enumerated().map { index, port in
            let config = scratch.folder.appendingPathComponent("cluster\(index).json")
            try Data("""
                {"store": {"integration": "postgres", "url": "\(database.url)"},
                 "daemon": {"concurrency": 8, "maxRequestsPerHost": 4}, "metrics": {"listen": "127.0.0.1:\(port)"},
                 "feeds": [{"name": "web", "opml": "web.opml", "interval": "1h", "posts": {"timeoutSeconds": 60}},
                           \(apiEntries.joined(separator: ",\n"))]}
                """.utf8).write(to: config)
            return config
        }

        let total = Self.webFeeds + Self.apiFeeds
        let daemons = try configs.map { try DaemonProcess(config: $0.path, in: scratch) }
        let synced = try await eventually {
            try await psql(database, "SELECT count(DISTINCT feed) FROM sync_runs WHERE error IS NULL") == "\(total)"
        }
        #expect(synced, "every feed synced once: \(daemons.map { String($0.log.suffix(600)) })")
        // Each daemon's /metrics shows its share: the syncs its own log counts.
        for (daemon, port) in zip(daemons, ports) {
            var shown = (metrics: -1, logged: 0)
            #expect(try await eventually {
                shown = (try await Self.okSyncs(port: port), Self.syncsDone(daemon.log).count)
                return shown.metrics == shown.logged
            }, "/metrics counted \(shown.metrics) syncs, the log \(shown.logged)")
            #expect(shown.logged > 0)
        }
        for daemon in daemons { daemon.signal(SIGTERM) }
        for daemon in daemons { #expect(await daemon.stopsInTime()) }

        // Each feed's posts are stored exactly once: every feed holds its 3 posts, none twice.
        let complete = try await psql(database, """
            SELECT count(*) FROM (SELECT feed FROM posts GROUP BY feed
                HAVING count(*) = \(Self.postsPerFeed) AND count(DISTINCT id) = \(Self.postsPerFeed)) AS whole
            """)
        #expect(complete == "\(total)")
        #expect(try await psql(database, "SELECT count(*) FROM posts") == "\(total * Self.postsPerFeed)")
        // No two runs of one feed overlapped in time: no feed was ever synced by two daemons at once.
        let overlaps = try await psql(database, """
            SELECT count(*) FROM sync_runs a JOIN sync_runs b
                ON a.feed = b.feed AND a.id < b.id AND a.started_at < b.finished_at AND b.started_at < a.finished_at
            """)
        #expect(overlaps == "0")
        // Every successful run was logged by exactly one daemon, and every feed by at least one.
        let logged = daemons.map { Self.syncsDone($0.log) }
        let runs = try await psql(database, "SELECT count(*) FROM sync_runs WHERE error IS NULL")
        #expect(runs == "\(logged.map(\.count).reduce(0, +))", "syncs per daemon: \(logged.map(\.count))")
        #expect(logged.reduce(into: Set<String>()) { $0.formUnion($1) }.count == total)
        // One login per account across the cluster: the session is shared through the store.
        let logins = try await api.stats().byPath["POST /v1/auth/login"]?.values.reduce(0, +)
        #expect(logins == Self.accounts)
        // A figure, not a bound: a feed is synced again when another daemon claims it between a
        // sync giving its lease back and that daemon recording the next attempt.
        print("cluster: \(total) feeds, \(runs) successful runs, syncs per daemon \(logged.map(\.count))")
    }
}
