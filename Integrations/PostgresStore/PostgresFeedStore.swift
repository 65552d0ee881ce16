import Core
import Foundation
import StoreKit
import Synchronization
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
///
/// Its roles live in one file each, named as the SQLite store's: the write path (`+Writing`),
/// the video cache (`+Videos`), the backend and sweep (`+Sweep`), run records and statuses
/// (`+Statuses`), reads (`+Reading`), read marks (`+ReadMarks`), leases and the fence
/// (`+Leases`), daemon presence and the schedule (`+Daemons`), sessions (`+Sessions`), purges
/// (`+Purge`). What both stores answer the same way (a feed's cursor, backend and stream
/// position, live states) is StoreKit's ``SQLStore``, and the statements both run are
/// StoreKit's ``StoreSQL``.
public actor PostgresFeedStore: SQLStore, ReaderAccountKeeper {
    /// The statements both stores run, in PostgreSQL's dialect.
    public static let sql = StoreSQL(.postgres)
    /// The reader accounts' statements: the store's own dialect, on its own connection.
    public static let accountSQL = sql
    /// In the schema a read-only role is not granted, as sessions are.
    public static let readerAccountTables = (users: "feedsync_private.serve_users", tokens: "feedsync_private.serve_tokens")

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
    /// What each claim that took a lease read ahead for its sync, until the first write under it.
    var prefetched: [String: ClaimPrefetch] = [:]
    private var renewal: Task<Void, Never>?
    /// Feeds whose last long page held only new posts: their next is copied straight into
    /// `posts` (``PostgresDirectRows``) or inserted outright (``writeStaged(_:feed:in:)``).
    var walkingNew: Set<String> = []
    /// Round trips the last page's write took (``lastPageRoundTripsForTests``).
    var lastPageRoundTrips = 0
    /// Who this process is, in the lease and daemon rows.
    let host = ProcessInfo.processInfo.hostName
    let process = "\(getpid())"
    /// This process's daemon record, once it joined (``join(startedAt:)``).
    var instance: String?

    /// One renewal at a time per account in this process.
    let sessionLocks = AccountLocks()
    /// Whether the per-feed sessions table of older versions may still hold rows.
    var formerSessionsLeft = true

    /// Whether the server makes the same vectors as ``PostgresSearchWords`` (its ``PostgresSearchWords/probe``,
    /// asked at ``open()``), so pages bring their posts' words ready-made.
    nonisolated let searchWordsAgreed = Atomic<Bool>(false)

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
            try PostgresMigration.migrate(db, now: StoredTime.milliseconds(Date()))
        }
        searchWordsAgreed.store(Self.splitsWordsAlike(db), ordering: .relaxed)
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

    /// Whether the server makes the vectors of ``PostgresSearchWords/probe`` that the store
    /// makes, so pages may bring their posts' words. Not an error when it cannot tell (a server
    /// too busy to answer, say): it then makes every vector itself, as it did before.
    private static func splitsWordsAlike(_ db: PostgresConnection) -> Bool {
        let probe = PostgresSearchWords.probe
        let agreed = try? db.withAnswerTimeout(60) {
            try db.transaction {
                try db.execute("SET LOCAL statement_timeout = 0")
                return try db.query("SELECT bool_and(to_tsvector('simple', t) = v::tsvector) FROM unnest($1::text[], $2::text[]) AS p(t, v)",
                                    [pgArray(probe.map(\.text)), pgArray(probe.map(\.vector))]).first?.first ?? nil
            }
        }
        return agreed == "t"
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

    /// How many times the last page's write waited for the server's answer: counted inside the
    /// write, so a lease renewal the store sends between two pages is not charged to either.
    var lastPageRoundTripsForTests: Int { lastPageRoundTrips }

    /// Gives back every lease and closes the connection.
    public func close() {
        renewal?.cancel()
        renewal = nil
        if let connection, !held.isEmpty {
            _ = try? connection.query("UPDATE feed_leases SET token = NULL, holder = NULL, instance = NULL, expires_at = NULL WHERE token = ANY($1::text[])",
                                      [pgArray(Array(held.values))])
        }
        held = [:]
        prefetched = [:]
        connection = nil
    }

    func storage<T>(_ operation: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        try translatingFailures(PostgresError.self, operation, body)
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

    public func withConnection<T>(_ operation: @autoclosure () -> String, _ body: (any SQLConnection) throws -> T) throws -> T {
        let db = try db(operation())
        return try storage(operation()) { try body(db) }
    }

    /// ``fenced(_:_:_:)``: one transaction that checks the lease is still this worker's.
    public func writing<T>(under lease: FeedLease, _ operation: @autoclosure () -> String,
                           _ body: (any SQLConnection) throws -> T) throws -> T {
        try fenced(lease, operation()) { try body($0) }
    }

    /// The reader accounts are in the store itself (its private schema): a write is local state.
    public func withReaderAccounts<T>(_ operation: @autoclosure () -> String, writing: Bool,
                                      _ body: (any SQLConnection) throws -> T) throws -> T {
        writing ? try writingLocalState(operation(), body) : try withConnection(operation(), body)
    }

    /// One transaction that waits for the disk, unlike a page (which commits with
    /// `synchronous_commit = off`): what it writes exists nowhere else.
    public func writingLocalState<T>(_ operation: @autoclosure () -> String, _ body: (any SQLConnection) throws -> T) throws -> T {
        let db = try db(operation())
        return try storage(operation()) {
            try db.transaction {
                try db.execute("SET LOCAL synchronous_commit = on")
                return try body(db)
            }
        }
    }

    /// Runs one query, translating failures, and returns its rows with their column names.
    func runTable(_ operation: @autoclosure () -> String, _ sql: String, _ parameters: [String?] = []) throws -> PostgresTable {
        let db = try db(operation())
        return try storage(operation()) { try db.table(sql, parameters) }
    }

    /// BEGIN, and the transaction's statements planned once per session rather than at every
    /// run: the server planned a claim's read and take and a page's upsert anew each time (a
    /// plan for the parameters' values looked cheaper to it than the one plan for any), 66 of
    /// its 266 s in the full cluster run of issue 40 (pg_stat_statements). Only the claims and
    /// the pages, whose plans are the same whatever the values: reads outside them keep
    /// PostgreSQL's own choice.
    static let beginWithGenericPlans: [PostgresConnection.Statement] = [("BEGIN", []), ("SET LOCAL plan_cache_mode = force_generic_plan", [])]

    /// The server's clock in milliseconds, as SQL: every lease time is the server's, so the
    /// workers' clocks need not agree.
    static let nowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint"
}
