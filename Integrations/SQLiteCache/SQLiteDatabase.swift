import CSQLite
import Foundation
import StoreKit

/// One SQLite connection: statements prepared once and reused, transactions that roll back
/// when their body throws.
///
/// - Important: Not `Sendable`: an SQLite connection must be used from one thread at a time,
///   so exactly one actor (``SQLiteFeedStore``) owns it.
final class SQLiteDatabase {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens the database at `path`, which must exist unless it is `:memory:`.
    ///
    /// - Throws: ``SQLiteError`` whose message names the reason, from the system when SQLite
    ///   has one (`Permission denied`, `Read-only file system`).
    /// - Parameters:
    ///   - extraFlags: more `SQLITE_OPEN_…` flags, such as `SQLITE_OPEN_NOFOLLOW`.
    ///   - readOnly: open with `SQLITE_OPEN_READONLY`: no statement can change the file.
    ///   - immutable: with `readOnly`, also take no lock and make no `-shm` or `-wal` file
    ///     (`immutable=1`): only for a file no process is writing, whose WAL is empty.
    init(path: String, extraFlags: Int32 = 0, readOnly: Bool = false, immutable: Bool = false) throws {
        _ = Self.processSetUp
        var db: OpaquePointer?
        var flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX | (path == ":memory:" ? SQLITE_OPEN_CREATE : 0) | extraFlags
        var name = path
        if readOnly, immutable, path != ":memory:" {
            // A URI filename: `%`, `?` and `#` in the path are escaped so they stay part of it.
            var escaped = ""
            for character in path.unicodeScalars {
                switch character {
                case "%": escaped += "%25"
                case "?": escaped += "%3f"
                case "#": escaped += "%23"
                default: escaped.unicodeScalars.append(character)
                }
            }
            name = "file:\(escaped)?mode=ro&immutable=1"
            flags |= SQLITE_OPEN_URI
        }
        let code = sqlite3_open_v2(name, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let systemErrno = db.map { sqlite3_system_errno($0) } ?? 0
            let message = systemErrno != 0 ? String(cString: strerror(systemErrno))
                : db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw SQLiteError(code: code, message: message, sql: nil, systemErrno: systemErrno)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    /// SQLite's process-wide settings, made once, before the process's first connection
    /// initializes SQLite (a global `let` is initialized exactly once, under a lock).
    ///
    /// Memory statistics are off: nothing reads them, and keeping them takes a process-wide
    /// mutex on every allocation and free, which `perf record` of a cold sync showed as about
    /// 10% of its CPU. Should something in the process have initialized SQLite first, the call
    /// fails with `SQLITE_MISUSE` and changes nothing, which costs speed, not correctness.
    private static let processSetUp: Void = {
        _ = feedsync_sqlite3_config_memstatus(0)
    }()

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that take no parameters (schema, pragmas).
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            var error = SQLiteError(code: code, database: handle, sql: sql)
            error.message = text
            throw error
        }
    }

    /// The prepared statement for `sql`, prepared on first use and cached.
    func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        let statement = try SQLiteStatement(database: handle, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs a shared statement (``StoreSQL``) with its values (``SQLConnection``).
    ///
    /// - Returns: how many rows it returned.
    @discardableResult
    func run(_ shared: StoreStatement) throws -> Int {
        let prepared = try statement(shared.sql)
        return try prepared.query(shared.values) { _ in () }.count
    }

    /// Runs a shared query (``StoreSQL``), each row read as it says.
    func query<Row>(_ shared: StoreQuery<Row>) throws -> [Row] {
        try statement(shared.statement.sql).query(shared.statement.values) { shared.row($0) }
    }

    /// Runs `body` in one write transaction; any error rolls all of it back.
    func withTransaction<T>(_ body: () throws -> T) throws -> T {
        try transaction("BEGIN IMMEDIATE", body)
    }

    /// As ``withTransaction(_:)``, with the transaction's statement journals held in memory: for
    /// a transaction of many small statements whose size the caller bounds (a page's commit).
    ///
    /// SQLite copies each page a statement changes into a statement journal, so that the one
    /// statement can be undone alone; past 64 KiB that journal spills into a temporary file. A
    /// page of 100 posts (inserts with triggers, then its search index in one statement) made
    /// about 330 small writes there per commit: half the commit's `pwrite` calls. SQLite reads
    /// `temp_store` when the transaction begins, so it is `MEMORY` only around this one: on the
    /// whole connection it would also hold large sorts and DISTINCTs of exports in memory.
    /// Nothing of durability changes: a statement journal only ever undoes a statement.
    func withPageTransaction<T>(_ body: () throws -> T) throws -> T {
        try statement("PRAGMA temp_store = MEMORY").run()
        // Outside any transaction again here, where temp_store may change.
        defer { try? statement("PRAGMA temp_store = DEFAULT").run() }
        return try transaction("BEGIN IMMEDIATE", body)
    }

    /// Runs `body`'s reads in one transaction: one snapshot, and one WAL read lock rather than
    /// one per statement.
    func withReadTransaction<T>(_ body: () throws -> T) throws -> T {
        try transaction("BEGIN DEFERRED", body)
    }

    private func transaction<T>(_ begin: String, _ body: () throws -> T) throws -> T {
        try statement(begin).run()
        do {
            let result = try body()
            try statement("COMMIT").run()
            return result
        } catch {
            try? statement("ROLLBACK").run()
            throw error
        }
    }

    /// Runs `body` again while it fails because another connection holds a lock, for up to
    /// `seconds`: for the few statements SQLite's busy handler does not cover.
    func retryingWhileBusy(for seconds: TimeInterval, _ body: () throws -> Void) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try body()
            } catch let error as SQLiteError where [SQLITE_BUSY, SQLITE_LOCKED].contains(error.code & 0xFF) && Date() < deadline {
                usleep(20_000)
            }
        }
    }

    /// The rowid of the most recent successful INSERT.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Rows changed since the connection opened.
    var totalChanges: Int { Int(sqlite3_total_changes64(handle)) }

    /// Waits up to `milliseconds` for another connection's lock before failing with busy.
    func setBusyTimeout(milliseconds: Int32) { sqlite3_busy_timeout(handle, milliseconds) }
}

extension SQLiteDatabase: SQLConnection {}
