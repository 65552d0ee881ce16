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
    /// The store's `lease`, short so the test sees several renewals and the takeover soon, and
    /// long beside the daemons' renewals (a third of it): a busy machine that stalls a live daemon
    /// for a few seconds does not let another take its feed over.
    static let lease = 10
    /// Feedsyncd's own margin after a lease's expiry before it claims the feed again (Scheduler.leaseTick).
    static let tickMilliseconds: Int64 = 500
    /// How many neighbouring feeds of the config a daemon on a shared store walks in their order (StartOrder.block).
    static let startOrderRun = 256

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
        // planned from its own deadlines: at most one tick after the later of the expiry its last
        // claim saw and the moment it decided (not the wall clock: a starved daemon decides late).
        let lines = survivors.flatMap { $0.log.split(separator: "\n").filter { $0.contains("event=stale_lease_taken_over ") } }
        for lease in orphaned {
            let line = lines.first { $0.contains(" feed=\(lease.feed) ") && $0.contains("process \(victim.pid)") }
            #expect(line != nil, "a survivor logged taking over \(lease.feed)")
            guard let line else { continue }
            let planned = field("planned_ms", in: line).flatMap { Int64($0) }
            #expect(planned != nil, "every takeover line says when the claim was planned: \(line)")
            // A survivor whose first claim came after the expiry never saw the lease held: its plan
            // was its first, and the line says neither the expiry nor a decision (both or neither).
            let seen = field("expiry_ms", in: line).flatMap { Int64($0) }, decided = field("decided_ms", in: line).flatMap { Int64($0) }
            #expect((seen == nil) == (decided == nil), "\(lease.feed): expiry and decision come together: \(line)")
            guard let planned, let seen, let decided else { continue }
            // The last claim before the takeover saw the lease as the killed daemon left it (or later,
            // should a renewal sent before SIGSTOP have committed after the test read it).
            #expect(seen >= lease.expires, "\(lease.feed): decided on an expiry \(seen) before the last one, \(lease.expires)")
            // 1 ms for the rounding of each time to whole milliseconds.
            #expect(planned <= max(seen, decided) + Self.tickMilliseconds + 1,
                    "\(lease.feed): planned at \(planned), its lease ran out at \(seen), decided at \(decided)")
        }
        for daemon in survivors { daemon.signal(SIGTERM) }
        for daemon in survivors { #expect(await daemon.stopsInTime()) }
        // No two runs of one feed overlapped in time.
        #expect(try await psql(database, """
            SELECT count(*) FROM sync_runs a JOIN sync_runs b
                ON a.feed = b.feed AND a.id < b.id AND a.started_at < b.finished_at AND b.started_at < a.finished_at
            """) == "0")
    }

    /// Issue 40: a survivor's takeover claims waited for a sync slot behind ~1,000 due feeds, so
    /// the runs began up to two minutes after the leases ran out. Now a claim planned for a lease's
    /// expiry goes ahead of the feeds waiting for a slot.
    @Test func takeoversGoAheadOfABacklogOfDueFeeds() async throws {
        try await takeOverBehindABacklog(heldFeedsFirst: true)
    }

    /// Issue 40: a survivor that walks its feeds in an order of its own may not have come to the
    /// dead daemon's feeds when their leases run out (137 s later in the full cluster run). The
    /// lease watch finds leases that ran out held, and plans those feeds' takeovers at once.
    @Test func leasesThatRunOutHeldAreFoundBeforeTheWalkComesToTheirFeeds() async throws {
        try await takeOverBehindABacklog(heldFeedsFirst: false)
    }

    /// A survivor with one slot and 256 feeds due at once (one run of ``StartOrder``, walked in the
    /// config's order), four of which the killed daemon held: they are taken over while the
    /// backlog still waits. `heldFeedsFirst`: the survivor claims them first and finds them held
    /// (its takeovers are planned for the expiry); else they come last in its walk, and only the
    /// lease watch can find them in time.
    private func takeOverBehindABacklog(heldFeedsFirst: Bool) async throws {
        let database = try await PostgresServer.makeDatabase()
        // The killed daemon's feeds, held at their server; the backlog's feeds, each page 150 ms away:
        // at one slot, at least 38 s for the backlog, against a lease (3 s) and a watch's look (5 s).
        let held = try ReferenceServer(posts: 3), slow = try ReferenceServer(posts: 3)
        try await held.hold(after: 0)
        try await slow.control("POST", "/_control/faults", body: #"{"latency_ms": 150}"#)
        let scratch = try Scratch()
        let taken = (0..<4).map { "t\($0)" }, backlog = (0..<(Self.startOrderRun - 4)).map { String(format: "b%03d", $0) }
        func config(_ name: String, feeds: [String], concurrency: Int) throws -> String {
            let entries = feeds.map { feed in
                #"{"name": "\#(feed)", "interval": "1h", "posts": {"integration": "httpapi", "baseURL": "\#(feed.hasPrefix("t") ? held.baseURL : slow.baseURL)", "#
                    + #""username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD"}}"#
            }
            let json = #"{"store": {"integration": "postgres", "url": "\#(database.url)", "lease": "\#(Self.lease)s"}, "#
                + #""daemon": {"concurrency": \#(concurrency), "maxRequestsPerHost": \#(concurrency)}, "feeds": [\#(entries.joined(separator: ", "))]}"#
            let url = scratch.folder.appendingPathComponent(name)
            try Data(json.utf8).write(to: url)
            return url.path
        }
        // The first daemon holds the four feeds' leases, mid-sync.
        let victim = try DaemonProcess(config: config("victim.json", feeds: taken, concurrency: 4), in: scratch)
        #expect(try await eventually { try await held.held() == taken.count }, "\(victim.log.suffix(800))")
        // The survivor has one slot and 256 feeds due at once. With the four first, it finds them held
        // (to claim again once their leases run out) and goes on with the backlog, a run at a time.
        let walk = heldFeedsFirst ? taken + backlog : backlog + taken
        let survivor = try DaemonProcess(config: config("survivor.json", feeds: walk, concurrency: 1), in: scratch)
        let started = try await eventually { survivor.log.contains("event=sync_done feed=b") }
        #expect(started, "the survivor syncs its backlog: \(survivor.log.suffix(800))")

        victim.signal(SIGSTOP)
        let expiries = try await psql(database, """
            SELECT max(expires_at) FROM feed_leases WHERE holder LIKE '%process \(victim.pid)' AND token IS NOT NULL
            """)
        victim.signal(SIGKILL)
        #expect(await victim.exits())
        try await held.release()
        let expiry = try #require(Int64(expiries), "the killed daemon held leases")

        // Each of the four is taken over, in a run begun after the leases ran out …
        let takeovers = "SELECT feed, min(started_at) AS at FROM sync_runs WHERE feed LIKE 't%' AND error IS NULL AND started_at >= \(expiry) GROUP BY feed"
        #expect(try await eventually { try await psql(database, "SELECT count(*) FROM (\(takeovers)) t") == "\(taken.count)" },
                "\(survivor.log.suffix(1_500))")
        // … while the backlog is still waiting: counted by the runs begun before the last takeover's.
        let before = try await psql(database, """
            SELECT count(DISTINCT feed) FROM sync_runs WHERE feed LIKE 'b%' AND started_at < (SELECT max(at) FROM (\(takeovers)) t)
            """)
        #expect(Int(before).map { $0 < backlog.count } == true,
                "\(before) of the backlog's \(backlog.count) feeds began before the last takeover")
        #expect(survivor.log.split(separator: "\n").filter { $0.contains("event=stale_lease_taken_over ") }.count == taken.count)
        survivor.signal(SIGTERM)
        #expect(await survivor.stopsInTime())
    }

    private func count(of pid: Int32, in holders: String) -> Int {
        holders.split(separator: "\n").filter { $0.hasSuffix("process \(pid)") }.count
    }

    /// A `key=value` field of a log line.
    private func field(_ key: String, in line: Substring) -> String? {
        line.split(separator: " ").first { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) }
    }
}
