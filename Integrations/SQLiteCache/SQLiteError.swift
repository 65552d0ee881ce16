/// An SQLite failure with its result code, SQLite's message and the statement that failed.
///
/// `description` is what a person reads: the message and code, one line. The SQL is kept for
/// `debugDescription`, which debug logs and tests may show.
struct SQLiteError: Error, CustomStringConvertible, CustomDebugStringConvertible {
    var code: Int32
    var message: String
    var sql: String?

    var description: String { "\(message) (SQLite error \(code))" }

    var debugDescription: String {
        description + (sql.map { " in: \($0.split(whereSeparator: \.isNewline).joined(separator: " "))" } ?? "")
    }
}
