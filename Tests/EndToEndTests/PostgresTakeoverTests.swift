import Foundation
import PostgresTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `feedsyncd` SIGKILLed while it holds leases has its feeds taken over by the daemons left,
/// once its leases run out (issue 40: they waited one feed interval, an hour, because a daemon
/// that found a feed held looked again only then).
@Suite(.endToEnd, .needsPostgres) struct PostgresTakeoverTests {
    static let feeds = 12
    /// The store's `lease`, short so the test sees several renewals and the takeover soon.
    static let lease = 3
    /// Feedsyncd's own margin after a lease's expiry before it claims the feed again (Scheduler.leaseTick).
    static let tickMilliseconds: Int64 = 500

    @Test func theFeedsOfAKilledDaemonAreTakenOverOnceItsLeasesRunOut() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 3)
        // Every page request waits at the server: each sync holds its feed's lease until released.
        try await server.hold(after: 0)
        let scratch = try Scratch()
        // More slots than feeds: each daemon claims every feed at once, so each finds the others'
        // feeds held (rather than reaching some only after the lease ran out).
        let config = try scratch.writePostgresConfig(database, baseURL: server.baseURL, feeds: Self.feeds, interval: "1h",
                                                     storeKeys: #", "lease": "\#(Self.lease)s""#,
                                                     daemon: #"{"concurrency": 16, "maxRequestsPerHost": 16}"#)
        let daemons = try (0..<3).map { _ in try DaemonProcess(config: config, in: scratch) }
        let allHeld = try await eventually { try await server.held() == Self.feeds }
        #expect(allHeld, "every feed's sync waits at the server: \(daemons.map { String($0.log.suffix(400)) })")

        // The daemon holding the most leases is frozen (its leases are no longer renewed), its
        // leases read as they stand, then it is killed: nobody renews or gives them back.
        let byPid = try await psql(database, "SELECT holder FROM feed_leases WHERE token IS NOT NULL")
        let victim = try #require(daemons.max { a, b in count(of: a.pid, in: byPid) < count(of: b.pid, in: byPid) })
        victim.signal(SIGSTOP)
        let orphaned = try await psql(database, """
            SELECT feed || '|' || expires_at FROM feed_leases WHERE holder LIKE '%process \(victim.pid)' AND token IS NOT NULL
            """).split(separator: "\n").map { line in
            let parts = line.split(separator: "|")
            return (feed: String(parts[0]), expires: Int64(parts[1]) ?? 0)
        }
        victim.signal(SIGKILL)
        #expect(await victim.exits())
        #expect(!orphaned.isEmpty, "the killed daemon held leases")
        try await server.release()

        // Every feed it held is synced by a daemon left, in a run that began after its lease ran out.
        let survivors = daemons.filter { $0 !== victim }
        let takenOver = try await eventually {
            let runs = try await psql(database, """
                SELECT count(DISTINCT r.feed) FROM sync_runs r JOIN (VALUES \(orphaned.map { "('\($0.feed)', \($0.expires)::bigint)" }
                    .joined(separator: ", "))) AS o(feed, expires) ON r.feed = o.feed AND r.error IS NULL AND r.started_at >= o.expires
                """)
            return runs == "\(orphaned.count)"
        }
        #expect(takenOver, "each of \(orphaned.map(\.feed)) synced again: \(survivors.map { String($0.log.suffix(800)) })")
        // Each by the daemons' own record: a survivor took over the stale lease, at a claim it
        // planned for at most one tick after the lease's expiry as the store recorded it.
        let lines = survivors.flatMap { $0.log.split(separator: "\n").filter { $0.contains("event=stale_lease_taken_over ") } }
        for lease in orphaned {
            let line = lines.first { $0.contains(" feed=\(lease.feed) ") && $0.contains("process \(victim.pid)") }
            let planned = line.flatMap { field("planned_ms", in: $0) }.flatMap { Int64($0) }
            #expect(line != nil, "a survivor logged taking over \(lease.feed)")
            #expect(planned.map { $0 <= lease.expires + Self.tickMilliseconds } == true,
                    "\(lease.feed): planned at \(planned ?? -1), lease ran out at \(lease.expires)")
        }
        for daemon in survivors { daemon.signal(SIGTERM) }
        for daemon in survivors { #expect(await daemon.stopsInTime()) }
        // No two runs of one feed overlapped in time.
        #expect(try await psql(database, """
            SELECT count(*) FROM sync_runs a JOIN sync_runs b
                ON a.feed = b.feed AND a.id < b.id AND a.started_at < b.finished_at AND b.started_at < a.finished_at
            """) == "0")
    }

    private func count(of pid: Int32, in holders: String) -> Int {
        holders.split(separator: "\n").filter { $0.hasSuffix("process \(pid)") }.count
    }

    /// A `key=value` field of a log line.
    private func field(_ key: String, in line: Substring) -> String? {
        line.split(separator: " ").first { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) }
    }
}
