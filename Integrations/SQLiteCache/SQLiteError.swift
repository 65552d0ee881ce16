import CSQLite
import Core
import Foundation

/// An SQLite failure with its result code, SQLite's message and the statement that failed.
///
/// `description` is what a person reads: the message and code, one line. The SQL is kept for
/// `debugDescription`, which debug logs and tests may show.
struct SQLiteError: Error, CustomStringConvertible, CustomDebugStringConvertible {
    var code: Int32
    var message: String
    var sql: String?
    /// The system's errno behind a failure to open or read a file (`sqlite3_system_errno`), or 0.
    var systemErrno: Int32 = 0

    init(code: Int32, message: String, sql: String?, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemErrno = systemErrno
    }

    /// The failure of the last call on `database`. SQLite says "unable to open database file"
    /// when it could not open the WAL or a temporary file; when the process ran out of
    /// descriptors, the message says that instead.
    init(code: Int32, database: OpaquePointer, sql: String?) {
        let primary = code & 0xFF
        self.init(code: code, message: String(cString: sqlite3_errmsg(database)), sql: sql,
                  systemErrno: primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR ? sqlite3_system_errno(database) : 0)
    }

    var description: String { "\(DescriptorLimit.reason(forErrno: systemErrno) ?? message) (SQLite error \(code))" }

    var debugDescription: String {
        description + (sql.map { " in: \($0.split(whereSeparator: \.isNewline).joined(separator: " "))" } ?? "")
    }
}

/// The reason for a failed system call on a file, in words: `strerror`, or the descriptor limit
/// named as such (``Core/DescriptorLimit``).
func systemReason(_ code: Int32) -> String {
    DescriptorLimit.reason(forErrno: code) ?? String(cString: strerror(code))
}
