import CSQLite
import StoreKit

/// `SQLITE_TRANSIENT`: SQLite copies bound text before the call returns, so Swift strings
/// may be released right after binding.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement, reused across calls: each run resets it and clears its bindings.
final class SQLiteStatement {
    fileprivate let handle: OpaquePointer
    private let database: OpaquePointer
    let sql: String

    init(database: OpaquePointer, sql: String) throws {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw SQLiteError(code: code, database: database, sql: sql)
        }
        self.handle = statement
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `values` to parameters 1…n, replacing earlier bindings.
    func bind(_ values: [SQLValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .integer(let int): code = sqlite3_bind_int64(handle, index, int)
            case .real(let double): code = sqlite3_bind_double(handle, index, double)
            case .text(let text): code = Self.bind(text, to: handle, at: index)
            case .null: code = sqlite3_bind_null(handle, index)
            }
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    /// Binds `text` to parameter `index` alone; SQLite keeps its own copy.
    func bind(_ text: String, at index: Int32) throws {
        let code = Self.bind(text, to: handle, at: index)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Binds all of `text`'s UTF-8, a NUL inside it included.
    private static func bind(_ text: String, to handle: OpaquePointer, at index: Int32) -> Int32 {
        guard let length = Int32(exactly: text.utf8.count) else { return SQLITE_TOOBIG }
        return sqlite3_bind_text(handle, index, text, length, transient)
    }

    /// Binds `values` of `rows` to parameters `first`, `first + 1`, …, leaving the other
    /// parameters as they are. Text is bound in place, not copied: every later run must bind
    /// these parameters again (or ``clearBindings()``) before the rows are unpinned.
    func bind(_ values: Range<Int>, of rows: PinnedRows, from first: Int32) throws {
        var index = first
        for value in rows.values[values] {
            let code: Int32
            switch value {
            case .integer(let int): code = sqlite3_bind_int64(handle, index, int)
            case .null: code = sqlite3_bind_null(handle, index)
            case .text(_, count: 0): code = sqlite3_bind_text(handle, index, "", 0, transient)
            case .text(let offset, let count):
                guard let length = Int32(exactly: count) else {
                    throw SQLiteError(code: SQLITE_TOOBIG, message: String(cString: sqlite3_errstr(SQLITE_TOOBIG)), sql: sql)
                }
                let start = UnsafeRawPointer(rows.bytes.baseAddress! + offset).assumingMemoryBound(to: CChar.self)
                code = sqlite3_bind_text(handle, index, start, length, nil)   // nil is SQLITE_STATIC: no copy
            }
            guard code == SQLITE_OK else { throw error(code) }
            index += 1
        }
    }

    /// Binds `integer` to parameter `index` alone.
    func bind(_ integer: Int64, at index: Int32) throws {
        let code = sqlite3_bind_int64(handle, index, integer)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Binds NULL to parameter `index` alone.
    func bindNull(at index: Int32) throws {
        let code = sqlite3_bind_null(handle, index)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Appends the current row's `columns` to `rows`, text as it is stored, without a `String`
    /// in between; a REAL or BLOB column is appended as NULL (the callers read none).
    func appendColumns(_ columns: Range<Int32>, to rows: inout RowBuffer) {
        for column in columns {
            switch sqlite3_column_type(handle, column) {
            case SQLITE_INTEGER: rows.append(sqlite3_column_int64(handle, column))
            case SQLITE_TEXT:
                // NULL only when SQLite ran out of memory converting the value.
                guard let text = sqlite3_column_text(handle, column) else { rows.append(nil as Int64?); continue }
                rows.append(utf8: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))))
            default: rows.append(nil as Int64?)
            }
        }
    }

    /// Runs the statement with its current bindings, keeping them for the next run.
    func execute() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Rewinds the statement, keeping its bindings.
    func reset() { sqlite3_reset(handle) }

    /// Unbinds every parameter, so no binding points at memory about to be released.
    func clearBindings() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Advances to the next row; `false` once the statement is done.
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            sqlite3_reset(handle)
            throw error(code)
        }
    }

    /// Runs a statement that returns no rows, with `values` bound.
    func run(_ values: [SQLValue] = []) throws {
        try bind(values)
        try execute()
    }

    /// Runs a query and maps each row.
    func query<T>(_ values: [SQLValue] = [], _ row: (SQLiteStatement) throws -> T) throws -> [T] {
        try bind(values)
        defer { sqlite3_reset(handle) }
        var rows: [T] = []
        while try step() { rows.append(try row(self)) }
        return rows
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    func optionalDouble(_ column: Int32) -> Double? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_double(handle, column)
    }

    /// The column's text, all of it: a NUL inside it does not end it.
    func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }

    private func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, database: database, sql: sql)
    }
}

/// A statement stepped onto a row is that row: the shared codec reads its columns (by the
/// positions it looked up by name in ``columnNames``).
extension SQLiteStatement: ResultRow {
    /// The result's column names, as `AS` gives them.
    /// Copies the row the statement is on into `batch`, each column as `kinds` declares it and
    /// as ``ResultRow`` would read it: text whole (a NUL inside does not end it), NULL as NULL.
    func copyRow(into batch: inout PostRowBatch, kinds: [ColumnKind]) {
        for (index, kind) in kinds.enumerated() {
            let column = Int32(index)
            switch kind {
            case .text:
                if let text = sqlite3_column_text(handle, column) {
                    batch.appendText(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))))
                } else {
                    batch.appendNull()
                }
            case .integer: batch.appendInteger(optionalInt64(column))
            case .real: batch.appendReal(optionalDouble(column))
            }
        }
    }

    var columnNames: [String] {
        (0 ..< sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
    }

    func text(_ column: Int) -> String? { string(Int32(column)) }
    func integer(_ column: Int) -> Int64? { optionalInt64(Int32(column)) }
    func real(_ column: Int) -> Double? { optionalDouble(Int32(column)) }
}
