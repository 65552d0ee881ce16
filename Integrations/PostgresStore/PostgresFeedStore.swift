import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL store: a ``FeedStore`` that several `feedsyncd` on several machines share.
///
/// Each page is one transaction with its cursor, written set-based (the posts through COPY into
/// a staging table, then one upsert per table). A feed's lease is a row in `feed_leases` with an
/// expiry; the store renews its leases while it holds them. It fails closed: every write to one
/// feed (a page, a sweep, a run record, the backend, videos, the session, the schedule) checks in
/// its own transaction that this worker holds the feed's lease and that it is still its own, so
/// a worker that never held it, gave it back, or stalled past it commits nothing (`.locked`).
public actor PostgresFeedStore {
    /// The libpq connection string, without the password (that goes in the environment).
    public nonisolated let conninfo: String
    /// How long a lease lasts unless renewed; a dead worker's feeds are free after this.
    public nonisolated let leasePeriod: TimeInterval
    /// How long the store waits on the server and the network before it calls the connection dead.
    public nonisolated let liveness: PostgresLiveness
    private let password: String?
    private var connection: PostgresConnection?
    /// The leases this process holds: feed → token.
    private var held: [String: String] = [:]
    private var renewal: Task<Void, Never>?
    /// Who this process is, in the lease and daemon rows.
    private let host = ProcessInfo.processInfo.hostName
    private let process = "\(getpid())"
    private var instance: String?

    private let executor = DatabaseExecutor(label: "feedsync.postgres")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Where a test holds a page before its transaction begins (``holdPageCommitsForTests(_:)``).
    private var pageGateForTests: (@Sendable (String) async -> Void)?

    public init(conninfo: String, password: String? = nil, leasePeriod: TimeInterval = 30,
                liveness: PostgresLiveness = PostgresLiveness()) {
        self.conninfo = conninfo
        self.password = password
        self.leasePeriod = leasePeriod
        self.liveness = liveness
    }

    /// A store dropped without ``close()`` stops renewing: its leases run out as a dead worker's.
    deinit { renewal?.cancel() }

    /// Connects and applies migrations (under an advisory lock); starts renewing held leases.
    ///
    /// - Throws: ``ServiceError`` `.storage` naming the server and the reason.
    public func open() throws {
        guard connection == nil else { return }
        let db = try storage("connecting to the PostgreSQL store") {
            try PostgresConnection(conninfo, password: password, liveness: liveness)
        }
        try storage("migrating the PostgreSQL store") {
            try PostgresMigration.migrate(db, now: milliseconds(Date()))
        }
        connection = db
        let every = max(0.2, leasePeriod / 3)
        // Weak, and ended when the store is gone: the task must not keep a dropped store alive,
        // nor loop on without one.
        renewal = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(every))
                guard let store = self else { return }
                await store.renewLeases()
            }
        }
    }

    /// Stops renewing leases, as a worker that hangs or dies would: for tests of takeover.
    func stopRenewingForTests() {
        renewal?.cancel()
        renewal = nil
    }

    /// The task that renews the leases, for a test that it ends with the store.
    var renewalForTests: Task<Void, Never>? { renewal }

    /// Holds every page of ``apply(_:videos:toFeed:)`` in `gate` (given the feed) after the call
    /// reached the store and before its transaction begins, as the store's queue may hold one
    /// while other calls (a release at shutdown) run first: for tests of the fence.
    func holdPageCommitsForTests(_ gate: (@Sendable (String) async -> Void)?) {
        pageGateForTests = gate
    }

    /// Waits in the test's gate, if one is set.
    func pageGate(_ feed: String) async {
        if let gate = pageGateForTests { await gate(feed) }
    }

    /// Starts recording the statements sent (again from none), for tests of what a write sends.
    func recordStatementsForTests() { connection?.sentForTests = [] }

    /// The statements sent since ``recordStatementsForTests()``.
    var statementsSentForTests: [String] { connection?.sentForTests ?? [] }

    /// Gives back every lease and closes the connection.
    public func close() {
        renewal?.cancel()
        renewal = nil
        if let connection, !held.isEmpty {
            _ = try? connection.query("UPDATE feed_leases SET token = NULL, holder = NULL, instance = NULL, expires_at = NULL WHERE token = ANY($1::text[])",
                                      [pgArray(Array(held.values))])
        }
        held = [:]
        connection = nil
    }

    func storage<T>(_ operation: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            throw ServiceError(.storage, operation(), error.description)
        }
    }

    func db(_ operation: @autoclosure () -> String) throws -> PostgresConnection {
        guard let connection else { throw ServiceError(.storage, operation(), "the PostgreSQL store is not open") }
        connection.reconnectIfBroken()
        return connection
    }

    /// Runs one statement, translating failures.
    @discardableResult
    func run(_ operation: @autoclosure () -> String, _ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let db = try db(operation())
        return try storage(operation()) { try db.query(sql, parameters) }
    }

    /// The server's clock in milliseconds, as SQL: every lease time is the server's, so the
    /// workers' clocks need not agree.
    static let nowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

    // MARK: Leases

    /// Pushes back the expiry of every lease this worker holds, on a remade connection if the
    /// server dropped the last one: a restart or failover must not cost the leases.
    func renewLeases() {
        guard let connection, !held.isEmpty else { return }
        let tokens = Array(held.values), period = "\(Int64(leasePeriod * 1000))"
        // A lease another worker took over meanwhile matches no row. Its token stays in `held`
        // until the sync gives it back, so the sync's next commit meets the fence and fails,
        // rather than finding no lease to check and committing as if it had one.
        let renew = { () throws -> Void in
            connection.reconnectIfBroken()
            try connection.query("""
                UPDATE feed_leases SET expires_at = \(Self.nowMs) + $2 WHERE token = ANY($1::text[])
                """, [pgArray(tokens), period])
        }
        do {
            try renew()
        } catch {
            // A connection the server closed shows only when used: remade, the renewal is tried
            // once more. One that stopped answering is remade at the next renewal instead, so
            // one renewal never waits twice.
            if !connection.isBroken && connection.isClosed { try? renew() }
        }
    }

    private func describeHolder(_ holder: String) -> String { "\(holder) on \(host), process \(process)" }

    /// Claims the lease row, once; the outcome for ``acquireLease(onFeed:holder:wait:onlyIfDue:)``.
    private enum Claim { case held(FeedLease), busy(String), notDue }

    private func claim(_ feed: String, holder: String, onlyIfDue: Bool) throws -> Claim {
        let db = try db("taking the lease on feed \(feed)")
        return try storage("taking the lease on feed \(feed)") {
            try db.transaction {
                try db.query("INSERT INTO feed_leases (feed) VALUES ($1) ON CONFLICT DO NOTHING", [feed])
                // SKIP LOCKED: a row another worker is claiming at this instant is that worker's.
                guard let row = try db.query("""
                    SELECT holder, token IS NOT NULL AND expires_at > \(Self.nowMs),
                           token IS NOT NULL AND expires_at <= \(Self.nowMs),
                           (SELECT f.next_attempt_at > \(Self.nowMs) + 1000 FROM feeds f WHERE f.name = $1)
                    FROM feed_leases WHERE feed = $1 FOR UPDATE SKIP LOCKED
                    """, [feed]).first, row.count == 4 else { return .busy("another worker") }
                if row[1] == "t" { return .busy(row[0] ?? "another worker") }
                if onlyIfDue, row[3] == "t" { return .notDue }
                let stale = row[2] == "t" ? row[0] : nil
                let token = UUID().uuidString
                try db.query("""
                    UPDATE feed_leases SET holder = $2, instance = $3, token = $4, expires_at = \(Self.nowMs) + $5 WHERE feed = $1
                    """, [feed, describeHolder(holder), instance, token, "\(Int64(leasePeriod * 1000))"])
                return .held(FeedLease(feed: feed, token: token, tookOverFrom: stale))
            }
        }
    }

    /// The lease this process holds on `feed`, if any: page commits check it is still theirs.
    func heldToken(_ feed: String) -> String? { held[feed] }

    /// Proves, inside the caller's transaction, that this worker holds the feed's lease and that
    /// it is still its own, and renews it: a worker that never took the lease, gave it back (a
    /// daemon stopping), or stalled past it while another took the feed over commits nothing.
    /// The renewal locks the lease row until the transaction ends, so no other worker can take
    /// the feed between the check and the commit.
    ///
    /// - Throws: ``ServiceError`` `.locked`.
    func checkLease(_ feed: String, _ operation: String, in db: PostgresConnection) throws {
        guard let token = heldToken(feed) else {
            throw ServiceError(.locked, operation, "this worker does not hold the feed's lease (it was given back or never taken); nothing was kept")
        }
        let kept = try db.query("""
            UPDATE feed_leases SET expires_at = \(Self.nowMs) + $3 WHERE feed = $1 AND token = $2 RETURNING 1
            """, [feed, token, "\(Int64(leasePeriod * 1000))"])
        guard !kept.isEmpty else {
            throw ServiceError(.locked, operation, "this worker's lease on the feed ran out and another worker took it over; nothing was kept")
        }
    }

    /// For the writes a worker makes outside a sync (the schedule): the lease row must not be
    /// another worker's live lease; while this worker holds one, it must still be its own.
    /// Locks the lease row until the transaction ends.
    private func checkNoOtherHolder(_ feed: String, _ operation: String, in db: PostgresConnection) throws {
        if heldToken(feed) != nil { return try checkLease(feed, operation, in: db) }
        let other = try db.query("""
            SELECT holder FROM feed_leases WHERE feed = $1 AND token IS NOT NULL AND expires_at > \(Self.nowMs) FOR UPDATE
            """, [feed])
        if let row = other.first {
            throw ServiceError(.locked, operation, "\(row[0] ?? "another worker") holds the feed's lease; nothing was kept")
        }
    }

    /// Runs `body` in one transaction behind the feed's lease (``checkLease(_:_:in:)``).
    @discardableResult
    func fenced<T>(_ feed: String, _ operation: @autoclosure () -> String, _ body: (PostgresConnection) throws -> T) throws -> T {
        let operation = operation()
        let db = try db(operation)
        return try storage(operation) {
            try db.transaction {
                try checkLease(feed, operation, in: db)
                return try body(db)
            }
        }
    }

    // MARK: Sessions

    public func session(ofFeed feed: String, backend: String) throws -> Session? {
        try run("reading the session of feed \(feed)", """
            SELECT access_token, refresh_token, expires_at FROM feedsync_private.sessions WHERE feed = $1 AND backend = $2
            """, [feed, backend]).first.map { row in
            Session(accessToken: Secret(row[0] ?? ""), refreshToken: row[1].map { Secret($0) },
                    expiresAt: row[2].map { Date(pgMilliseconds: $0) })
        }
    }

    public func saveSession(_ session: Session, ofFeed feed: String, backend: String) throws {
        try fenced(feed, "saving the session of feed \(feed)") { db in
            try db.query("""
                INSERT INTO feedsync_private.sessions (feed, backend, access_token, refresh_token, expires_at) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (feed) DO UPDATE SET backend = $2, access_token = $3, refresh_token = $4, expires_at = $5
                """, [feed, backend, session.accessToken.revealed, session.refreshToken?.revealed, session.expiresAt.map { "\(milliseconds($0))" }])
        }
    }

    // MARK: Daemon presence

    public func join(startedAt: Date) throws -> DaemonInstance {
        let daemon = DaemonInstance(id: "\(host)/\(process)/\(milliseconds(startedAt))", host: host, process: process,
                                    startedAt: startedAt, beatAt: Date())
        instance = daemon.id
        // Records of daemons that have not beaten for a day are gone for good.
        try run("recording the daemon", "DELETE FROM daemon WHERE beat_at < \(Self.nowMs) - 86400000")
        try beat(daemon)
        return daemon
    }

    public func beat(_ daemon: DaemonInstance) throws {
        try run("recording the daemon heartbeat", """
            INSERT INTO daemon (instance, host, pid, started_at, beat_at) VALUES ($1, $2, $3, $4, \(Self.nowMs))
            ON CONFLICT (instance) DO UPDATE SET beat_at = \(Self.nowMs)
            """, [daemon.id, daemon.host, Int32(daemon.process).map { "\($0)" }, "\(milliseconds(daemon.startedAt))"])
    }

    public func leave(_ daemon: DaemonInstance) {
        _ = try? run("clearing the daemon", "DELETE FROM daemon WHERE instance = $1", [daemon.id])
        _ = try? run("releasing the daemon's leases", """
            UPDATE feed_leases SET token = NULL, holder = NULL, instance = NULL, expires_at = NULL WHERE instance = $1
            """, [daemon.id])
        held = [:]
    }

    /// Records when this daemon will next sync the feed, and that this daemon set it.
    ///
    /// The daemon schedules a feed after its sync has given the lease back, so this write is
    /// fenced by the lease row rather than a held token: it fails (`.locked`) while another
    /// worker holds the feed, and, while this worker holds it, unless the lease is still its own.
    /// Clearing (`nil`) clears only a schedule this daemon recorded (see ``unschedule(_:)``).
    public func setNextAttempt(_ date: Date?, ofFeed feed: String) throws {
        let operation = "scheduling feed \(feed)"
        let db = try db(operation)
        try storage(operation) {
            try db.transaction {
                try checkNoOtherHolder(feed, operation, in: db)
                if let date {
                    try db.query("""
                        INSERT INTO feeds (name, next_attempt_at, scheduled_by) VALUES ($1, $2, $3)
                        ON CONFLICT (name) DO UPDATE SET next_attempt_at = $2, scheduled_by = $3
                        WHERE (feeds.next_attempt_at, feeds.scheduled_by) IS DISTINCT FROM ($2::bigint, $3::text)
                        """, [feed, "\(milliseconds(date))", instance])
                } else {
                    try db.query("""
                        UPDATE feeds SET next_attempt_at = NULL, scheduled_by = NULL
                        WHERE name = $1 AND next_attempt_at IS NOT NULL AND scheduled_by IS NOT DISTINCT FROM $2
                        """, [feed, instance])
                }
            }
        }
    }

    /// Clears the schedule this daemon recorded for `feeds`, for a daemon that stops: another
    /// daemon serving the same feeds may sync them when due, without waiting out this one's
    /// plan. A feed another daemon scheduled since, or holds the lease on now, is left as it is.
    public func unschedule(_ feeds: [String]) throws {
        guard !feeds.isEmpty else { return }
        try run("clearing the schedule of this daemon's feeds", """
            UPDATE feeds f SET next_attempt_at = NULL, scheduled_by = NULL
            WHERE f.name = ANY($1::text[]) AND f.next_attempt_at IS NOT NULL AND f.scheduled_by IS NOT DISTINCT FROM $2
                AND NOT EXISTS (SELECT 1 FROM feed_leases l WHERE l.feed = f.name AND l.token IS NOT NULL
                                AND l.expires_at > \(Self.nowMs))
            """, [pgArray(feeds), instance])
    }
}

extension PostgresFeedStore: FeedLeases {
    public func acquireLease(onFeed feed: String, holder: String, wait: TimeInterval, onlyIfDue: Bool) async throws -> FeedLease? {
        let deadline = Date().addingTimeInterval(wait)
        while true {
            switch try claim(feed, holder: holder, onlyIfDue: onlyIfDue) {
            case .held(let lease):
                held[feed] = lease.token
                return lease
            case .notDue:
                return nil
            case .busy(let current):
                // A daemon leaves a feed another worker holds to that worker.
                if onlyIfDue { return nil }
                guard Date() < deadline else {
                    throw ServiceError(.locked, "waiting for the lease on feed \(feed)", "\(current) holds it; gave up after \(Int(wait)) s")
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    public func release(_ lease: FeedLease) {
        held[lease.feed] = nil
        _ = try? run("releasing the lease on feed \(lease.feed)", """
            UPDATE feed_leases SET token = NULL, holder = NULL, instance = NULL, expires_at = NULL WHERE feed = $1 AND token = $2
            """, [lease.feed, lease.token])
    }
}

extension PostgresFeedStore: SessionKeeper, DaemonPresence {}

/// A PostgreSQL array literal of text values.
func pgArray(_ values: [String]) -> String {
    "{" + values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        .joined(separator: ",") + "}"
}
