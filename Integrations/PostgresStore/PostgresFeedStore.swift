import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL store: a ``FeedStore`` that several `feedsyncd` on several machines share.
///
/// Each page is one transaction with its cursor, written set-based (the posts through COPY into
/// a staging table, then one upsert per table). A feed's lease is a row in `feed_leases` with an
/// expiry; the store renews its leases while it holds them and every page commit checks its
/// lease is still its own, so a worker that stalls past its lease commits nothing more.
public actor PostgresFeedStore {
    /// The libpq connection string, without the password (that goes in the environment).
    public nonisolated let conninfo: String
    /// How long a lease lasts unless renewed; a dead worker's feeds are free after this.
    public nonisolated let leasePeriod: TimeInterval
    private let password: String?
    private var connection: PostgresConnection?
    /// The leases this process holds: feed → token.
    private var held: [String: String] = [:]
    private var renewal: Task<Void, Never>?
    /// Who this process is, in the lease and daemon rows.
    private let host = ProcessInfo.processInfo.hostName
    private let process = "\(getpid())"
    private var instance: String?

    /// One renewal at a time per account in this process.
    private let sessionLocks = AccountLocks()
    /// Whether the per-feed sessions table of older versions may still hold rows.
    private var formerSessionsLeft = true

    private let executor = DatabaseExecutor(label: "feedsync.postgres")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public init(conninfo: String, password: String? = nil, leasePeriod: TimeInterval = 30) {
        self.conninfo = conninfo
        self.password = password
        self.leasePeriod = leasePeriod
    }

    /// Connects and applies migrations (under an advisory lock); starts renewing held leases.
    ///
    /// - Throws: ``ServiceError`` `.storage` naming the server and the reason.
    public func open() throws {
        guard connection == nil else { return }
        let db = try storage("connecting to the PostgreSQL store") { try PostgresConnection(conninfo, password: password) }
        try storage("migrating the PostgreSQL store") {
            try PostgresMigration.migrate(db, now: milliseconds(Date()))
        }
        connection = db
        let every = max(0.2, leasePeriod / 3)
        renewal = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(every))
                await self?.renewLeases()
            }
        }
    }

    /// Stops renewing leases, as a worker that hangs or dies would: for tests of takeover.
    func stopRenewingForTests() {
        renewal?.cancel()
        renewal = nil
    }

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

    func renewLeases() {
        guard let connection, !held.isEmpty else { return }
        let tokens = Array(held.values)
        // A lease another worker took over meanwhile matches no row. Its token stays in `held`
        // until the sync gives it back, so the sync's next commit meets the fence and fails,
        // rather than finding no lease to check and committing as if it had one.
        _ = try? connection.query("""
            UPDATE feed_leases SET expires_at = \(Self.nowMs) + $2 WHERE token = ANY($1::text[])
            """, [pgArray(tokens), "\(Int64(leasePeriod * 1000))"])
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

    public func setNextAttempt(_ date: Date?, ofFeed feed: String) throws {
        try run("scheduling feed \(feed)", """
            INSERT INTO feeds (name, next_attempt_at) VALUES ($1, $2)
            ON CONFLICT (name) DO UPDATE SET next_attempt_at = $2 WHERE feeds.next_attempt_at IS DISTINCT FROM $2::bigint
            """, [feed, date.map { "\(milliseconds($0))" }])
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
