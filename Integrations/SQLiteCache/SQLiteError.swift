/// An SQLite failure with its result code, SQLite's message and the statement that failed.
struct SQLiteError: Error, CustomStringConvertible {
    var code: Int32
    var message: String
    var sql: String?

    var description: String {
        let statement = sql.map { " (in \($0.prefix(80)))" } ?? ""
        return "SQLite error \(code): \(message)\(statement)"
    }
}
