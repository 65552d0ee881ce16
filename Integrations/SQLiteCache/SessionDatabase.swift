import CSQLite
import Core
import Foundation
import StoreKit
#if canImport(Glibc)
import Glibc
#endif

/// Each account's backend tokens, and the reader listener's accounts and tokens (`serve_users`,
/// `serve_tokens`), in a small private SQLite database beside the store:
/// `<database>.sessions.sqlite`.
///
/// Tokens are not kept in the mirror, because people publish their mirror (Datasette, a
/// copied file) and every table goes with it. This file is mode 0600, owned by this user,
/// never opened through a symbolic link, and written one row per save in a transaction, so a
/// save costs the same however many accounts it holds. Its journal is a rollback journal that
/// is deleted at each commit and freed pages are zeroed (`secure_delete`), so a replaced token
/// does not linger in a side file.
///
/// It also holds the sessions an older version kept per feed (`<database>.sessions`, JSON),
/// moved here at the first use of a session and taken one by one as each feed syncs; the old
/// file is removed once they are safely here. Commands that only read the mirror never touch
/// either file.
///
/// - Important: Not `Sendable`; the store actor owns it. The file is created at the first save
///   (or move, or use of the reader accounts), so a store that never logs in has none.
final class SessionDatabase {
    let path: String
    /// The older version's file, moved in at first use.
    private let former: SessionFile?
    private var database: SQLiteDatabase?
    private var formerMoved = false
    /// Whether `former_sessions` may still hold rows: once it is found empty, no feed asks SQL again.
    private var formerSessionsLeft = true

    init(path: String, former: SessionFile?) {
        self.path = path
        self.former = former
    }

    /// The session saved for `account`.
    func session(of account: AccountKey) throws -> Session? {
        try moveFormerSessionsIn()
        guard let db = try open(create: false) else { return nil }
        return try sqlite("reading the session of \(account)") {
            try db.query(SQLiteFeedStore.sql.session(of: account, in: "sessions")).first
        }
    }

    /// Saves `account`'s session: one row, one transaction.
    func save(_ session: Session, of account: AccountKey) throws {
        try moveFormerSessionsIn()
        guard let db = try open(create: true) else { return }
        try sqlite("saving the session of \(account)") {
            _ = try db.run(SQLiteFeedStore.sql.saveSession(session, of: account, in: "sessions"))
        }
    }

    /// The session `feed` kept before sessions belonged to accounts, if `backend` issued it;
    /// removed either way.
    func takeFormerSession(ofFeed feed: String, backend: String) throws -> Session? {
        try moveFormerSessionsIn()
        guard formerSessionsLeft, let db = try open(create: false) else { return nil }
        return try sqlite("reading the former session of feed \(feed)") {
            try db.withTransaction {
                let found = try db.statement("SELECT access_token, refresh_token, expires_at, backend FROM former_sessions WHERE feed = ?1")
                    .query([.text(feed)]) { row in (Self.session(row), row.string(3) ?? "") }.first
                guard let found else {
                    formerSessionsLeft = try db.statement("SELECT EXISTS (SELECT 1 FROM former_sessions)").query { $0.int64(0) }.first == 1
                    return nil
                }
                try db.statement("DELETE FROM former_sessions WHERE feed = ?1").run([.text(feed)])
                // An entry without a backend predates backend identities: it is the feed's own.
                return found.1 == backend || found.1.isEmpty ? found.0 : nil
            }
        }
    }

    /// Moves the sessions of an older version's sessions file in, then removes that file; once
    /// per store.
    private func moveFormerSessionsIn() throws {
        guard !formerMoved else { return }
        if let former { try adoptFormerSessions(from: former) }
        formerMoved = true
    }

    private func adoptFormerSessions(from file: SessionFile) throws {
        let entries = try file.read()
        guard !entries.isEmpty, let db = try open(create: true) else {
            try file.write([:])
            return
        }
        try sqlite("moving the sessions of \(file.path) into \(path)") {
            try db.withTransaction {
                let insert = try db.statement("""
                    INSERT OR REPLACE INTO former_sessions (feed, backend, access_token, refresh_token, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
                    """)
                for (feed, entry) in entries {
                    try insert.run([.text(feed), .text(entry.backend), .text(entry.accessToken), .text(entry.refreshToken),
                                    .integer(entry.expiresAt)])
                }
            }
        }
        // Committed with synchronous = FULL: the tokens are on disk here before the old file goes.
        try file.write([:])
    }

    /// Runs `body` on this file's connection (created at first use), in one transaction when
    /// `writing`: the reader listener's accounts and tokens (``SQLiteFeedStore/readerAccountTables``).
    func withAccounts<T>(_ operation: @autoclosure () -> String, writing: Bool, _ body: (SQLiteDatabase) throws -> T) throws -> T {
        guard let db = try open(create: true) else { throw ServiceError(.storage, operation(), "the sessions file \(path) cannot be opened") }
        return try sqlite(operation()) { writing ? try db.withTransaction { try body(db) } : try body(db) }
    }

    func close() { database = nil }

    private static func session(_ row: SQLiteStatement) -> Session {
        Session(accessToken: Secret(row.string(0) ?? ""), refreshToken: row.string(1).map(Secret.init),
                expiresAt: row.optionalInt64(2).map(StoredTime.date))
    }

    /// The open connection; `nil` when the file does not exist and `create` is `false`.
    private func open(create: Bool) throws -> SQLiteDatabase? {
        if let database { return database }
        if path != ":memory:" {
            guard try preparePrivateFile(create: create) else { return nil }
        }
        let db = try sqlite("opening the sessions file \(path)") {
            let db = try SQLiteDatabase(path: path, extraFlags: SQLITE_OPEN_NOFOLLOW)
            db.setBusyTimeout(milliseconds: 10_000)
            try db.execute("""
                PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL; PRAGMA secure_delete = ON;
                CREATE TABLE IF NOT EXISTS sessions (
                    integration TEXT NOT NULL, server TEXT NOT NULL, account TEXT NOT NULL,
                    access_token TEXT NOT NULL, refresh_token TEXT, expires_at INTEGER,
                    PRIMARY KEY (integration, server, account)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS former_sessions (
                    feed TEXT PRIMARY KEY, backend TEXT NOT NULL,
                    access_token TEXT NOT NULL, refresh_token TEXT, expires_at INTEGER) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS serve_users (name TEXT PRIMARY KEY, password_hash TEXT NOT NULL, created_at INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS serve_tokens (
                    token_hash TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, feed TEXT);
                CREATE INDEX IF NOT EXISTS serve_tokens_by_name ON serve_tokens (name);
                """)
            return db
        }
        database = db
        return db
    }

    /// Makes sure the file is a private regular file of this user's with one name; `false` when
    /// it does not exist and may not be created.
    private func preparePrivateFile(create: Bool) throws -> Bool {
        let fd = Glibc.open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0o600)
        guard fd >= 0 else {
            if errno == ENOENT && !create { return false }
            throw ServiceError(.storage, "opening the sessions file \(path)",
                               errno == ELOOP ? "it is a symbolic link, which is never followed" : systemReason(errno))
        }
        // Closed before SQLite opens the file: closing a second descriptor later would drop
        // SQLite's own locks on it.
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1, info.st_uid == geteuid() else {
            throw ServiceError(.storage, "opening the sessions file \(path)",
                               "it is not a regular file of its own owned by this user; remove it to log in again")
        }
        guard info.st_mode & 0o777 == 0o600 || fchmod(fd, 0o600) == 0 else {
            throw ServiceError(.storage, "opening the sessions file \(path)", "cannot make it private (chmod 600): \(systemReason(errno))")
        }
        return true
    }

    private func sqlite<T>(_ operation: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw ServiceError(.storage, operation(), "\(error.message) in the sessions file \(path)")
        }
    }
}
