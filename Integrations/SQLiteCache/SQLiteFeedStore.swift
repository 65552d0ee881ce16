import Core
import Foundation
import StoreKit
#if canImport(Glibc)
import Glibc
#endif

/// The SQLite cache: a ``FeedStore`` in one database file that other SQLite tools can read.
///
/// Its leases are one file lock for the whole store (a feed's lease is a hold on it), and it
/// admits one daemon at a time: one machine, one writer. One actor owns the connection (SQLite
/// connections are not `Sendable`). Each page is one transaction holding its posts, authors,
/// videos, deletions and the feed's cursor; a row that already matches is not rewritten.
/// Read/unread marks live in `post_state` and no sync touches them.
///
/// Its roles live in one file each, named as the PostgreSQL store's: the write path
/// (`+Writing`), the video cache (`+Videos`), the backend and sweep (`+Sweep`), run records and
/// statuses (`+Statuses`), reads (`+Reading`), read marks (`+ReadMarks`), leases (`+Leases`),
/// daemon presence and the schedule (`+Daemons`), sessions (`+Sessions`), purges (`+Purge`),
/// and its files and their permissions (`+Files`). What both stores answer the same way (a
/// feed's cursor, backend and stream position, live states) is StoreKit's ``SQLStore``, and
/// the statements both run are StoreKit's ``StoreSQL``.
public actor SQLiteFeedStore: FeedStore, SQLStore, ReaderAccountKeeper {
    /// The statements both stores run, in SQLite's dialect.
    public static let sql = StoreSQL(.sqlite)
    /// The reader accounts' tables: in the private sessions file (``SessionDatabase``), never in the mirror.
    public static let readerAccountTables = (users: "serve_users", tokens: "serve_tokens")
    /// The reader accounts' statements (SQLite's, on the sessions file's connection).
    public static let accountSQL = sql

    /// Where the database lives: a file path, or `:memory:` for tests.
    public nonisolated let path: String
    let busyTimeoutMilliseconds: Int32
    private var database: SQLiteDatabase?
    let lock: StoreLockFile
    /// Held by the one daemon that serves this store, for as long as it runs.
    let daemonLock: StoreLockFile
    /// An older version's sessions file, `<database>.sessions`: moved into ``accountSessions`` at the first use of a session.
    private let sessions: SessionFile
    /// Every account's tokens: `<database>.sessions.sqlite`.
    let accountSessions: SessionDatabase
    /// One renewal at a time per account in this process.
    let sessionLocks = AccountLocks()

    /// Where the store logs: an upgrade of an existing store, slow work an operator should see,
    /// as a notice.
    private let log: Logger

    /// The store's jobs run on a queue of their own, never on the cooperative pool's threads.
    private let executor = DatabaseExecutor(label: "feedsync.sqlite")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public init(path: String, busyTimeoutMilliseconds: Int32 = 5_000, log: Logger = .disabled) {
        self.path = path
        self.log = log
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.lock = StoreLockFile(path: path + ".lock")
        self.daemonLock = StoreLockFile(path: path + ".daemon.lock")
        self.sessions = SessionFile(path: path + ".sessions")
        self.accountSessions = path == ":memory:" ? SessionDatabase(path: ":memory:", former: nil)
            : SessionDatabase(path: path + ".sessions.sqlite", former: sessions)
    }

    /// Opens the database, turns on WAL and applies migrations.
    ///
    /// The file and its side files end up mode 0600 whatever was there before. A store path
    /// that is a symbolic link is refused: the file is created and made private only where
    /// the config says.
    ///
    /// - Parameter create: create the file when it does not exist; when `false`, a missing
    ///   file is `.notFound` ("nothing synced yet") and nothing is created.
    /// - Throws: ``ServiceError`` `.storage` naming the path and the reason.
    public func open(create: Bool = true) throws {
        guard database == nil else { return }
        if path != ":memory:" { try preparePrivateFile(create: create) }
        database = try storage("opening the store \(path)") {
            let db = try SQLiteDatabase(path: path)
            db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
            // Switching a new file to WAL takes an exclusive lock and does not wait for one, so
            // processes opening a fresh store together take turns here.
            try db.retryingWhileBusy(for: TimeInterval(busyTimeoutMilliseconds) / 1000) {
                try db.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
                try SQLiteMigration.migrate(db, sessions: sessions, accounts: accountSessions, now: StoredTime.milliseconds(Date()),
                                            log: log, store: path)
            }
            if path != ":memory:" {
                for suffix in ["-wal", "-shm"] { _ = chmod(path + suffix, 0o600) }
            }
            return db
        }
    }

    /// Opens an existing database to read only (`SQLITE_OPEN_READONLY`): nothing is created,
    /// migrated or chmodded (not even a `-wal` or `-shm` beside an idle file), and a file whose
    /// schema is not this version's is not read.
    ///
    /// - Throws: ``ServiceError`` `.notFound` when there is no file, `.refused` when it needs
    ///   migrations, `.storage` when it cannot be read.
    public func openToRead() throws {
        guard database == nil else { return }
        let operation = "reading the store \(path)"
        if path != ":memory:" {
            var info = stat()
            guard lstat(path, &info) == 0 else {
                if errno == ENOENT { throw ServiceError(.notFound, operation, "nothing synced yet") }
                throw ServiceError(.storage, operation, systemReason(errno))
            }
            // lstat: a symbolic link is not followed, as ``open(create:)`` follows none.
            guard info.st_mode & S_IFMT == S_IFREG else { throw ServiceError(.storage, operation, "it is not a regular file") }
        }
        let db = try storage(operation) {
            // Without a -wal file no process has the database open (the last to close it removes
            // the file) and every commit is in the database itself: it is read as an immutable
            // file, so SQLite makes no -wal or -shm beside it. With one, those files are there
            // already and a reader shares them.
            let idle = path == ":memory:" || !FileManager.default.fileExists(atPath: path + "-wal")
            let db = try SQLiteDatabase(path: path, readOnly: true, immutable: idle)
            db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
            return db
        }
        let pending = try storage(operation) { try SQLiteMigration.pending(in: db) }
        guard pending.isEmpty else {
            throw ServiceError(.refused, operation, "it is from an older feedsync (\(pending.count) upgrade\(pending.count == 1 ? "" : "s") to apply); the next `feedsync pull` upgrades it")
        }
        database = db
    }

    /// Closes the connection; later calls fail until ``open()`` is called again.
    public func close() {
        database = nil
        accountSessions.close()
    }

    /// Runs `body` on the open connection, translating SQLite failures into ``ServiceError``.
    func storage<T>(_ operation: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        try translatingFailures(SQLiteError.self, operation, body)
    }

    func db(_ operation: @autoclosure () -> String) throws -> SQLiteDatabase {
        guard let database else { throw ServiceError(.storage, operation(), "the store \(path) is not open") }
        return database
    }

    public func withConnection<T>(_ operation: @autoclosure () -> String, _ body: (any SQLConnection) throws -> T) throws -> T {
        let db = try db(operation())
        return try storage(operation()) { try body(db) }
    }

    /// One transaction: SQLite's lease is this process's lock on the file, which it cannot lose
    /// (see ``apply(_:videos:under:)``), so the commit needs no check of it.
    public func writing<T>(under lease: FeedLease, _ operation: @autoclosure () -> String,
                           _ body: (any SQLConnection) throws -> T) throws -> T {
        let db = try db(operation())
        return try storage(operation()) { try db.withTransaction { try body(db) } }
    }

    /// The reader accounts are in the private sessions file, whose commits are `synchronous = FULL`.
    public func withReaderAccounts<T>(_ operation: @autoclosure () -> String, writing: Bool,
                                      _ body: (any SQLConnection) throws -> T) throws -> T {
        try accountSessions.withAccounts(operation(), writing: writing) { try body($0) }
    }

    /// One transaction, committed as every commit of this store is (WAL, `synchronous = NORMAL`).
    public func writingLocalState<T>(_ operation: @autoclosure () -> String, _ body: (any SQLConnection) throws -> T) throws -> T {
        let db = try db(operation())
        return try storage(operation()) { try db.withTransaction { try body(db) } }
    }
}
