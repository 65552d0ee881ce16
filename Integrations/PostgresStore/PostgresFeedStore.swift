import Core
import Foundation
import StoreKit
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
    /// Held as a ``Core/Secret`` for the store's life, so an error that repeats it is redacted.
    private let password: Secret?
    private(set) var connection: PostgresConnection?
    /// The leases this process holds: feed → token.
    var held: [String: String] = [:]
    private var renewal: Task<Void, Never>?
    /// Who this process is, in the lease and daemon rows.
    let host = ProcessInfo.processInfo.hostName
    let process = "\(getpid())"
    private(set) var instance: String?

    /// One renewal at a time per account in this process.
    private let sessionLocks = AccountLocks()
    /// Whether the per-feed sessions table of older versions may still hold rows.
    private var formerSessionsLeft = true

    private let executor = DatabaseExecutor(label: "feedsync.postgres")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Where a test holds a page before its transaction begins (``holdPageCommitsForTests(_:)``).
    private var pageGateForTests: (@Sendable (String) async -> Void)?

    public init(conninfo: String, password: String? = nil, leasePeriod: TimeInterval = 30,
                liveness: PostgresLiveness = PostgresLiveness()) {
        self.conninfo = conninfo
        self.password = password.map(Secret.init)
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
            try PostgresConnection(conninfo, password: password?.revealed, liveness: liveness)
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

    /// Connects to read only, for a look at what the store remembers: within 3 s or not at all,
    /// in read-only transactions, with no migration and no lease renewal. A schema without
    /// every migration of this version is not read.
    ///
    /// - Throws: ``ServiceError`` `.storage` when the server is out of reach, `.refused` when
    ///   the schema needs migrations (or was never made: `.notFound`).
    public func openToRead() throws {
        guard connection == nil else { return }
        // The last connect_timeout in a URI wins, so this shortens the store's own 10 s.
        let quick = conninfo + (conninfo.contains("?") ? "&" : "?") + "connect_timeout=3"
        let db = try storage("connecting to the PostgreSQL store") {
            try PostgresConnection(quick, password: password?.revealed, liveness: liveness)
        }
        let applied = try storage("reading the PostgreSQL store") { () -> Set<String>? in
            try db.execute("SET default_transaction_read_only = on")
            let table = try db.query("SELECT to_regclass('schema_migrations')::text").first?.first ?? nil
            guard table != nil else { return nil }
            return Set(try db.query("SELECT name FROM schema_migrations").compactMap { $0[0] })
        }
        guard let applied else { throw ServiceError(.notFound, "reading the PostgreSQL store", "nothing synced yet") }
        let pending = PostgresMigration.all.filter { !applied.contains($0.name) }.count
        guard pending == 0 else {
            throw ServiceError(.refused, "reading the PostgreSQL store",
                               "its schema is older (\(pending) upgrade\(pending == 1 ? "" : "s") to apply); the next `feedsync pull` upgrades it")
        }
        connection = db
    }

    /// Stops renewing leases, as a worker that hangs or dies would: for tests of takeover.
    func stopRenewingForTests() {
        renewal?.cancel()
        renewal = nil
    }

    /// The task that renews the leases, for a test that it ends with the store.
    var renewalForTests: Task<Void, Never>? { renewal }

    /// Holds every page of ``apply(_:videos:under:)`` in `gate` (given the feed) after the call
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

    /// How many times the store has waited for the server's answer on its connection.
    var roundTripsForTests: Int { connection?.roundTrips ?? 0 }

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
        } catch let error as MissingColumn {
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

    /// Runs one query, translating failures, and returns its rows with their column names.
    func runTable(_ operation: @autoclosure () -> String, _ sql: String, _ parameters: [String?] = []) throws -> PostgresTable {
        let db = try db(operation())
        return try storage(operation()) { try db.table(sql, parameters) }
    }

    /// The server's clock in milliseconds, as SQL: every lease time is the server's, so the
    /// workers' clocks need not agree.
    static let nowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

    // MARK: Sessions

    public func session(of account: AccountKey) throws -> Session? {
        try run("reading the session of \(account)", """
            SELECT access_token, refresh_token, expires_at FROM feedsync_private.account_sessions
            WHERE integration = $1 AND server = $2 AND account = $3
            """, [account.integration, account.server, account.account]).first.map(Self.session)
    }

    public func saveSession(_ session: Session, of account: AccountKey) throws {
        try run("saving the session of \(account)", """
            INSERT INTO feedsync_private.account_sessions (integration, server, account, access_token, refresh_token, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (integration, server, account) DO UPDATE SET access_token = $4, refresh_token = $5, expires_at = $6
            """, [account.integration, account.server, account.account, session.accessToken.revealed, session.refreshToken?.revealed,
                  session.expiresAt.map { "\(milliseconds($0))" }])
    }

    /// Takes the feed's row of the per-feed table older versions kept; once that table is found
    /// empty, no feed asks the server again.
    public func takeFormerSession(ofFeed feed: String, backend: String) throws -> Session? {
        guard formerSessionsLeft else { return nil }
        let rows = try run("reading the former session of feed \(feed)", """
            DELETE FROM feedsync_private.sessions WHERE feed = $1 RETURNING access_token, refresh_token, expires_at, backend
            """, [feed])
        guard let row = rows.first else {
            formerSessionsLeft = try run("reading the former sessions", "SELECT EXISTS (SELECT 1 FROM feedsync_private.sessions)").first?.first == "t"
            return nil
        }
        return row.count == 4 && row[3] == backend ? Self.session(row) : nil
    }

    /// Takes the account's lock in this process (``AccountLocks``: an advisory lock is
    /// re-entrant on one connection), then a session-level advisory lock on the account: the
    /// server frees it if this process dies, and it holds no transaction open while the session
    /// is renewed.
    public func lockSession(of account: AccountKey, wait: TimeInterval) async throws -> SessionLock {
        try await sessionLocks.lock(account)
        let deadline = Date().addingTimeInterval(wait)
        do {
            while true {
                let row = try run("locking the session of \(account)", "SELECT pg_try_advisory_lock(\(Self.sessionLockClass), hashtext($1))",
                                  ["\(account.integration) \(account.server) \(account.account)"]).first
                if row?.first == "t" { return SessionLock(account: account) }
                guard Date() < deadline else {
                    throw ServiceError(.locked, "waiting for the lock on the session of \(account)",
                                       "another process is renewing it; gave up after \(Int(wait)) s")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        } catch {
            sessionLocks.unlock(account)
            throw error
        }
    }

    public func unlockSession(_ lock: SessionLock) {
        let account = lock.account
        _ = try? run("unlocking the session of \(account)", "SELECT pg_advisory_unlock(\(Self.sessionLockClass), hashtext($1))",
                     ["\(account.integration) \(account.server) \(account.account)"])
        sessionLocks.unlock(account)
    }

    /// The first key of every session lock (two-key advisory locks never meet the one-key
    /// lock the migrations take): "fsse" as a number.
    static let sessionLockClass = 1_718_842_213

    private static func session(_ row: [String?]) -> Session {
        Session(accessToken: Secret(row[0] ?? ""), refreshToken: row[1].map { Secret($0) }, expiresAt: row[2].map { Date(pgMilliseconds: $0) })
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

extension PostgresFeedStore: SessionKeeper, DaemonPresence {}

/// A PostgreSQL array literal of text values.
func pgArray(_ values: [String]) -> String {
    "{" + values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        .joined(separator: ",") + "}"
}
