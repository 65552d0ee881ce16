import CPostgres
import Core
import Foundation

/// What went wrong in one libpq call: the server's SQLSTATE and message, and the SQL.
struct PostgresError: Error, CustomStringConvertible {
    var sqlState: String?
    var message: String
    var sql: String

    var description: String { message.trimmingCharacters(in: .whitespacesAndNewlines) }
}

/// One libpq connection: text parameters in, text columns out, and transactions that roll back on throw.
///
/// - Important: Not `Sendable`; the store actor owns it.
final class PostgresConnection {
    private let connection: OpaquePointer

    /// Connects with a libpq connection string or URI (`postgresql://feedsync@db/feedsync`),
    /// passing the password apart so it never sits in a string that could be logged.
    init(_ conninfo: String, password: String?) throws {
        // The session's settings travel with the connection, so a reconnect keeps them; they come
        // before `dbname`, whose expansion may override them (`?options=…` in the URL).
        var keys = ["options", "dbname"], values = [Self.sessionOptions, conninfo]
        if let password { keys.append("password"); values.append(password) }
        let keyCopies = keys.map { strdup($0) } + [nil], valueCopies = values.map { strdup($0) } + [nil]
        defer { (keyCopies + valueCopies).forEach { free($0) } }
        let made = keyCopies.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            valueCopies.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in PQconnectdbParams(k.baseAddress, v.baseAddress, 1) }
        }
        guard let connection = made else {
            throw PostgresError(sqlState: nil, message: "libpq could not allocate a connection", sql: "")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(sqlState: nil, message: message, sql: "")
        }
        self.connection = connection
    }

    deinit { PQfinish(connection) }

    /// Commits need not wait for the disk, as SQLite's WAL with `synchronous=NORMAL`: a crash of
    /// the database machine may lose the last pages committed, with their cursor (they are
    /// fetched again), and never tears one. Notices ("already exists, skipping") stay quiet.
    static let sessionOptions = "-c synchronous_commit=off -c client_min_messages=warning"

    /// Reconnects when the server closed the connection (a restart, a failover, an idle
    /// timeout); the next statement then runs on the new one.
    func reconnectIfBroken() {
        if PQstatus(connection) != CONNECTION_OK { PQreset(connection) }
    }

    /// Runs one or more statements without parameters.
    func execute(_ sql: String) throws {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        try check(result, sql)
    }

    /// Runs one statement with text parameters (`nil` is NULL).
    /// - Returns: the rows, each column as text or `nil` for NULL.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let copies = parameters.map { $0.map { strdup(withoutNUL($0)) } ?? nil }
        defer { copies.forEach { free($0) } }
        let result = copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            PQexecParams(connection, sql, Int32(parameters.count), nil, values.baseAddress, nil, nil, 0)
        }
        defer { PQclear(result) }
        try check(result, sql)
        let rows = PQntuples(result), columns = PQnfields(result)
        return (0..<rows).map { row in
            (0..<columns).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
    }

    /// Streams `rows` (in COPY's text format) into a table with `COPY … FROM STDIN`.
    func copyIn(_ sql: String, _ rows: [UInt8]) throws {
        let started = PQexec(connection, sql)
        let status = PQresultStatus(started)
        PQclear(started)
        guard status == PGRES_COPY_IN else {
            throw PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(connection)), sql: sql)
        }
        // In chunks of 1 MiB: libpq takes an Int32 length, and any page fits that way.
        var sent: Int32 = 1
        rows.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { bytes in
                var offset = 0
                while offset < buffer.count, sent == 1 {
                    let length = min(1 << 20, buffer.count - offset)
                    sent = PQputCopyData(connection, bytes + offset, Int32(length))
                    offset += length
                }
            }
        }
        // Ended either way, so the connection leaves COPY mode: a failed send aborts the COPY
        // (and with it the transaction) instead of leaving every later statement refused.
        let ended = PQputCopyEnd(connection, sent == 1 ? nil : "feedsync could not send the rows")
        var failure: PostgresError? = sent == 1 && ended == 1 ? nil
            : PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(connection)), sql: sql)
        while let result = PQgetResult(connection) {
            defer { PQclear(result) }
            do { try check(result, sql) } catch let error as PostgresError { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// Runs `body` in one transaction, rolling back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func check(_ result: OpaquePointer?, _ sql: String) throws {
        let status = PQresultStatus(result)
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return }
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let message = result.map { String(cString: PQresultErrorMessage($0)) } ?? String(cString: PQerrorMessage(connection))
        throw PostgresError(sqlState: state, message: message, sql: sql)
    }
}
