import Foundation
import PostgresTestSupport
import ProcessTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Three `feedsyncd` share 60 feeds through one PostgreSQL store while workers are killed with
/// SIGKILL and restarted, and the server's posts are appended, edited and deleted.
@Suite(.endToEnd, .needsPostgres) struct PostgresChaosTests {
    static let feeds = 60
    static let lease: TimeInterval = 5
    /// Workers killed, one every 2 to 6 s: about a minute of chaos alone, longer on a busy machine.
    static let kills = 10

    @Test func workersKilledAtRandomLoseNothingAndNeverOverlap() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 200, pageSize: 50)
        // Each request takes 60 ms, so a sync holds its lease long enough for kills to catch some.
        try await server.control("POST", "/_control/faults", body: #"{"latency_ms": 60}"#)
        let scratch = try Scratch()
        let config = try scratch.writePostgresConfig(database, baseURL: server.baseURL, feeds: Self.feeds, pageSize: 50,
                                                     interval: "2s", storeKeys: #", "lease": "\#(Int(Self.lease))s""#,
                                                     daemon: #"{"concurrency": 4, "heartbeat": "1s"}"#)
        var random = SeededRandom(state: 20_261_122)
        var workers = try (0..<3).map { _ in try DaemonProcess(config: config, in: scratch) }
        /// Each SIGKILL: the database server's clock then, and the leases the worker held, with
        /// when each runs out.
        var kills: [(at: Int64, pid: Int32, leases: [(feed: String, expires: Int64)])] = []
        var nextKill = Date().addingTimeInterval(3)
        // Counted in kills, not seconds: a busy machine makes each round slower, not fewer.
        while kills.count < Self.kills {
            // The server's feed changes under the workers.
            let live = try await server.snapshot().map { String($0.split(separator: "|")[0]) }
            switch Int.random(in: 0..<4, using: &random) {
            case 0, 1: try await server.control("POST", "/_control/append?count=\(Int.random(in: 1...5, using: &random))")
            case 2: if let id = live.randomElement(using: &random) { try await server.control("POST", "/_control/edit?id=\(id)") }
            default: if let id = live.randomElement(using: &random) { try await server.control("POST", "/_control/delete?id=\(id)") }
            }
            if Date() >= nextKill {
                let index = Int.random(in: 0..<workers.count, using: &random)
                let pid = workers[index].pid
                workers[index].signal(SIGKILL)
                _ = await workers[index].exits()
                // After it is gone: any sync that starts from now on is another worker's.
                let killedAt = try await psql(database, "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint")
                // The leases it held when it died: nobody renews or releases them now.
                let orphaned = try await psql(database, """
                    SELECT feed || '|' || expires_at FROM feed_leases WHERE holder LIKE '%process \(pid)' AND token IS NOT NULL
                    """).split(separator: "\n").map { line in
                    let parts = line.split(separator: "|")
                    return (feed: String(parts[0]), expires: Int64(parts[1]) ?? 0)
                }
                kills.append((Int64(killedAt) ?? 0, pid, orphaned))
                workers[index] = try DaemonProcess(config: config, in: scratch)
                nextKill = Date().addingTimeInterval(Double.random(in: 2...6, using: &random))
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 100...400, using: &random)))
        }

        // The workers that are left catch up with the server: every feed reaches its head.
        let head = try await server.control("POST", "/_control/append?count=1")["head"] as? Int ?? -1
        let caughtUp = try await eventually {
            try await psql(database, "SELECT count(*) FROM feeds WHERE cursor = '\(head)'") == "\(Self.feeds)"
        }
        #expect(caughtUp, "every feed reached the server's head \(head)")
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers { #expect(await worker.exits()) }

        // Every feed equals a clean sync of the server.
        let snapshot = try await server.snapshot()
        let stored = try await storedPosts(database)
        for index in 0..<Self.feeds {
            let feed = String(format: "f%02d", index)
            #expect(stored[feed] == snapshot, "feed \(feed) differs from the server")
        }
        // No two runs of one feed overlapped in time.
        let overlaps = try await psql(database, """
            SELECT count(*) FROM sync_runs a JOIN sync_runs b
                ON a.feed = b.feed AND a.id < b.id AND a.started_at < b.finished_at AND b.started_at < a.finished_at
            """)
        #expect(overlaps == "0")
        // Every feed a killed worker held was synced again after it died, by a worker that took
        // over the lease once it ran out, and not before.
        var slowest: Int64 = 0
        for kill in kills {
            for lease in kill.leases {
                let after = try await psql(database, """
                    SELECT min(started_at) FROM sync_runs WHERE feed = '\(lease.feed)' AND error IS NULL AND started_at >= \(kill.at)
                    """)
                let resumed = try #require(Int64(after), "feed \(lease.feed), held by process \(kill.pid), was never synced after it died")
                #expect(resumed >= lease.expires, "feed \(lease.feed) was synced again before the dead worker's lease ran out")
                slowest = max(slowest, resumed - lease.expires)
            }
        }
        let orphaned = kills.map(\.leases.count).reduce(0, +)
        #expect(orphaned > 0, "some worker died holding a lease")
        // A figure, not a bound: alone, within one interval (2 s) of the expiry; on a busy
        // machine each worker's claims queue on its one connection and it takes longer.
        print("chaos: \(kills.count) workers killed, leaving \(orphaned) leases; the slowest takeover began "
              + "\(slowest) ms after its lease ran out (lease \(Int(Self.lease)) s)")
    }
}
