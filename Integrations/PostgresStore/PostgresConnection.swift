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
/// Every request is sent and every answer awaited with a deadline (``PostgresLiveness/answerTimeout``):
/// the socket is non-blocking and waited on with `poll`, so a server or link that went silent
/// fails the operation in bounded time instead of blocking the store's thread for good. A
/// connection that missed a deadline is broken: nothing more is sent on it until it is remade.
///
/// - Important: Not `Sendable`; the store actor owns it.
final class PostgresConnection {
    private let connection: OpaquePointer
    private var answerTimeout: TimeInterval
    /// Set when an answer did not come in time: the connection's state is unknown, so nothing
    /// more is sent on it (not even a ROLLBACK) until ``reconnectIfBroken()`` remakes it.
    private(set) var isBroken = false
    /// The server closed the connection (libpq sees it only once it is used).
    var isClosed: Bool { PQstatus(connection) != CONNECTION_OK }
    /// Every statement sent, when a test asks for them (`[]`); `nil` records nothing.
    var sentForTests: [String]?
    /// How many times the connection has sent something and waited for the server's answer.
    private(set) var roundTrips = 0
    /// What this session has prepared.
    private(set) var statements = PostgresStatementCache()

    /// Connects with a libpq connection string or URI (`postgresql://feedsync@db/feedsync`),
    /// passing the password apart so it never sits in a string that could be logged.
    init(_ conninfo: String, password: String?, liveness: PostgresLiveness = PostgresLiveness()) throws {
        // The session's settings travel with the connection, so a reconnect keeps them; they come
        // before `dbname`, whose expansion may override them (`?options=…` in the URL).
        var keys = ["options"] + liveness.connectionOptions.map(\.0) + ["dbname"]
        var values = [Self.sessionOptions + " " + liveness.sessionSettings] + liveness.connectionOptions.map(\.1) + [conninfo]
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
        PQsetnonblocking(connection, 1)
        self.connection = connection
        self.answerTimeout = liveness.answerTimeout
    }

    deinit { PQfinish(connection) }

    /// Commits need not wait for the disk, as SQLite's WAL with `synchronous=NORMAL`: a crash of
    /// the database machine may lose the last pages committed, with their cursor (they are
    /// fetched again), and never tears one. What cannot be fetched again (read marks) and
    /// deletions turn it back on for their own transaction (`SET LOCAL synchronous_commit = on`).
    /// Notices ("already exists, skipping") stay quiet.
    ///
    /// No JIT compilation: the store's statements are short, and the server compiles a plan
    /// whose estimate passes `jit_above_cost` anew at every run. The feeds' status read (a post
    /// count per feed) passed it from some thousands of feeds on: at 11,000 feeds it spent 428 ms
    /// of 534 compiling (EXPLAIN ANALYZE), and each daemon of a cluster ran it every 5 s (issue 40).
    static let sessionOptions = "-c synchronous_commit=off -c client_min_messages=warning -c jit=off"

    /// Reconnects when the server closed the connection (a restart, a failover, an idle
    /// timeout) or an answer did not come in time; the next statement then runs on the new one.
    /// Waits at most the URL's `connect_timeout`.
    func reconnectIfBroken() {
        guard isBroken || PQstatus(connection) != CONNECTION_OK else { return }
        PQreset(connection)
        statements.forget()
        PQsetnonblocking(connection, 1)
        isBroken = PQstatus(connection) != CONNECTION_OK
    }

    /// Runs `body` with a longer deadline for each answer (a migration), then restores it.
    func withAnswerTimeout<T>(_ seconds: TimeInterval, _ body: () throws -> T) rethrows -> T {
        let usual = answerTimeout
        answerTimeout = seconds
        defer { answerTimeout = usual }
        return try body()
    }

    /// Runs one or more statements without parameters.
    func execute(_ sql: String) throws {
        try send(sql) { PQsendQuery(connection, sql) }
        try finish(sql) { _ in }
    }

    /// Runs one statement with text parameters (`nil` is NULL).
    /// - Returns: the rows, each column as text or `nil` for NULL.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let use = statements.use(sql, parameters: parameters.count)
        // Prepared and run in one request: a pipeline of one.
        if case .prepare = use { return try pipeline([(sql, parameters)], uses: [use])[0].get() }
        let copies = parameters.map { $0.map { strdup(withoutNUL($0)) } ?? nil }
        defer { copies.forEach { free($0) } }
        try send(sql) { queue(sql, copies, use) }
        var rows: [[String?]] = []
        try finish(sql) { result in rows = Self.rows(of: result) }
        return rows
    }

    /// Runs one statement with text parameters, and returns its rows with its column names, for
    /// reading by name.
    func table(_ sql: String, _ parameters: [String?] = []) throws -> PostgresTable {
        let copies = parameters.map { $0.map { strdup(withoutNUL($0)) } ?? nil }
        defer { copies.forEach { free($0) } }
        try send(sql) {
            copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
                PQsendQueryParams(connection, sql, Int32(parameters.count), nil, values.baseAddress, nil, nil, 0)
            }
        }
        var table = PostgresTable(columns: [], rows: [])
        try finish(sql) { result in
            table = PostgresTable(columns: (0 ..< PQnfields(result)).map { String(cString: PQfname(result, $0)) },
                                  rows: Self.rows(of: result))
        }
        return table
    }

    /// A result's rows, each column as text or `nil` for NULL.
    private static func rows(of result: OpaquePointer?) -> [[String?]] {
        let count = PQntuples(result), columns = PQnfields(result)
        return (0..<count).map { row in
            (0..<columns).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
    }

    /// Streams `rows` (in the format `sql` names) into a table with `COPY … FROM STDIN`.
    func copyIn(_ sql: String, _ rows: [UInt8]) throws {
        let deadline = Date().addingTimeInterval(answerTimeout)
        try send(sql) { PQsendQuery(connection, sql) }
        guard let started = try nextResult(sql, until: deadline) else {
            throw PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(connection)), sql: sql)
        }
        let status = PQresultStatus(started)
        PQclear(started)
        guard status == PGRES_COPY_IN else {
            try? finish(sql) { _ in }
            throw PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(connection)), sql: sql)
        }
        // In chunks of 1 MiB: libpq takes an Int32 length, and any page fits that way. A chunk
        // libpq cannot queue yet (0) waits for the socket to drain.
        var sent: Int32 = 1
        try rows.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            try base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { bytes in
                var offset = 0
                while offset < buffer.count, sent == 1 {
                    let length = min(1 << 20, buffer.count - offset)
                    sent = PQputCopyData(connection, bytes + offset, Int32(length))
                    if sent == 0 { try flush(sql, until: deadline); sent = 1; continue }
                    offset += length
                }
            }
        }
        // Ended either way, so the connection leaves COPY mode: a failed send aborts the COPY
        // (and with it the transaction) instead of leaving every later statement refused.
        var ended: Int32 = 0
        repeat {
            ended = PQputCopyEnd(connection, sent == 1 ? nil : "feedsync could not send the rows")
            if ended == 0 { try flush(sql, until: deadline) }
        } while ended == 0
        try flush(sql, until: deadline)
        roundTrips += 1
        var failure: PostgresError? = sent == 1 && ended == 1 ? nil
            : PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(connection)), sql: sql)
        while let result = try nextResult(sql, until: deadline) {
            defer { PQclear(result) }
            do { try check(result, sql) } catch let error as PostgresError { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    /// One statement of a ``pipeline(_:)``: SQL and its text parameters (`nil` is NULL).
    typealias Statement = (sql: String, parameters: [String?])

    /// Sends `statements` together in libpq's pipeline mode, then reads their answers: one round
    /// trip for all of them. A statement after a failed one is not run (its answer is the first
    /// failure) unless a transaction ended between them.
    /// - Returns: each statement's rows or failure, in order.
    func pipeline(_ statements: [Statement]) throws -> [Result<[[String?]], PostgresError>] {
        try pipeline(statements, uses: statements.map { self.statements.use($0.sql, parameters: $0.parameters.count) })
    }

    private func pipeline(_ statements: [Statement], uses: [PostgresStatementCache.Use]) throws -> [Result<[[String?]], PostgresError>] {
        let label = statements.first?.sql ?? ""
        guard !isBroken else { throw dropped(label) }
        guard PQenterPipelineMode(connection) == 1 else { throw lastError(label) }
        // Left once every answer has been read; a pipeline abandoned halfway (a send that failed,
        // an answer that did not come) leaves the connection in a state nothing else expects.
        defer { if PQexitPipelineMode(connection) != 1 { isBroken = true } }
        let deadline = Date().addingTimeInterval(answerTimeout)
        for ((sql, parameters), use) in zip(statements, uses) {
            sentForTests?.append(sql)
            let copies = parameters.map { $0.map { strdup(withoutNUL($0)) } ?? nil }
            defer { copies.forEach { free($0) } }
            guard queue(sql, copies, use) == 1 else { throw lastError(sql) }
        }
        guard PQpipelineSync(connection) == 1 else { throw lastError(label) }
        roundTrips += 1
        try flush(label, until: deadline)
        var answers: [Result<[[String?]], PostgresError>] = []
        var failure: PostgresError?
        for ((sql, _), use) in zip(statements, uses) {
            if case .prepare(let name) = use, try preparedAnswer(sql, until: deadline, failure: &failure) {
                self.statements.prepared(sql, as: name)
            }
            var answer: Result<[[String?]], PostgresError> = .success([])
            while let result = try nextResult(sql, until: deadline) {
                defer { PQclear(result) }
                if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                    answer = .failure(failure ?? PostgresError(sqlState: nil, message: "not run: an earlier statement failed", sql: sql))
                    continue
                }
                do {
                    try check(result, sql)
                    answer = .success(Self.rows(of: result))
                } catch let error as PostgresError {
                    failure = failure ?? error
                    answer = .failure(error)
                }
            }
            answers.append(answer)
        }
        // The sync point's own answer ends the pipeline.
        guard let sync = try nextResult(label, until: deadline) else { throw lastError(label) }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced else { throw lastError(label) }
        return answers
    }

    /// Queues `sql` with its parameters (`copies`, C strings or NULL) as `use` says: unnamed, by
    /// its prepared name, or prepared and then run by name (in pipeline mode only).
    private func queue(_ sql: String, _ copies: [UnsafeMutablePointer<CChar>?], _ use: PostgresStatementCache.Use) -> Int32 {
        copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            let count = Int32(copies.count)
            switch use {
            case .unnamed:
                return PQsendQueryParams(connection, sql, count, nil, values.baseAddress, nil, nil, 0)
            case .prepared(let name):
                return PQsendQueryPrepared(connection, name, count, values.baseAddress, nil, nil, 0)
            case .prepare(let name):
                guard PQsendPrepare(connection, name, sql, count, nil) == 1 else { return 0 }
                return PQsendQueryPrepared(connection, name, count, values.baseAddress, nil, nil, 0)
            }
        }
    }

    /// Reads the answer to a pipeline's prepare of `sql`: whether the server prepared it. A
    /// failure becomes the pipeline's first `failure` if it has none (the run after it is not made).
    private func preparedAnswer(_ sql: String, until deadline: Date, failure: inout PostgresError?) throws -> Bool {
        var prepared = false
        while let result = try nextResult(sql, until: deadline) {
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK { prepared = true; continue }
            guard status != PGRES_PIPELINE_ABORTED else { continue }
            do { try check(result, sql) } catch let error as PostgresError { failure = failure ?? error }
        }
        return prepared
    }

    /// Ends the transaction a failed operation left open, if the connection is still usable.
    func rollbackIfOpen() {
        let status = PQtransactionStatus(connection)
        guard !isBroken, status == PQTRANS_INTRANS || status == PQTRANS_INERROR else { return }
        try? execute("ROLLBACK")
    }

    /// Runs `body` in one transaction, rolling back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if !isBroken { try? execute("ROLLBACK") }
            throw error
        }
    }

    // MARK: Sending and waiting, with a deadline

    /// Queues a request and sends it whole, within the answer timeout.
    private func send(_ sql: String, _ queue: () -> Int32) throws {
        guard !isBroken else { throw dropped(sql) }
        sentForTests?.append(sql)
        roundTrips += 1
        guard queue() == 1 else { throw lastError(sql) }
        try flush(sql, until: Date().addingTimeInterval(answerTimeout))
    }

    /// Reads every result of the request sent last, giving each successful one to `body`;
    /// throws the first failure once all have been read.
    private func finish(_ sql: String, _ body: (OpaquePointer?) throws -> Void) throws {
        let deadline = Date().addingTimeInterval(answerTimeout)
        var failure: PostgresError?
        while let result = try nextResult(sql, until: deadline) {
            defer { PQclear(result) }
            do {
                try check(result, sql)
                if failure == nil { try body(result) }
            } catch let error as PostgresError {
                failure = failure ?? error
            }
            // COPY results never end on their own; nothing here starts one.
            let status = PQresultStatus(result)
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT { break }
        }
        if let failure { throw failure }
    }

    /// The next result of the request in flight, `nil` when there are no more.
    private func nextResult(_ sql: String, until deadline: Date) throws -> OpaquePointer? {
        while PQisBusy(connection) == 1 {
            try wait(forWriting: false, sql, until: deadline)
            guard PQconsumeInput(connection) == 1 else {
                throw PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(connection)), sql: sql)
            }
        }
        return PQgetResult(connection)
    }

    /// Sends what libpq has queued, reading meanwhile so the server is never stuck writing to us.
    private func flush(_ sql: String, until deadline: Date) throws {
        while true {
            let flushed = PQflush(connection)
            if flushed == 0 { return }
            guard flushed == 1 else {
                throw PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(connection)), sql: sql)
            }
            try wait(forWriting: true, sql, until: deadline)
            guard PQconsumeInput(connection) == 1 else {
                throw PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(connection)), sql: sql)
            }
        }
    }

    /// Waits until the socket is readable (or, `forWriting`, writable or readable), or the
    /// deadline passes: then the connection is marked broken and the operation fails.
    private func wait(forWriting: Bool, _ sql: String, until deadline: Date) throws {
        let events = Int16(POLLIN) | (forWriting ? Int16(POLLOUT) : 0)
        let socket = PQsocket(connection)
        guard socket >= 0 else {
            throw PostgresError(sqlState: nil, message: "the connection to the PostgreSQL server is closed", sql: sql)
        }
        var descriptor = pollfd(fd: socket, events: events, revents: 0)
        while true {
            let left = deadline.timeIntervalSinceNow
            let ready = left > 0 ? poll(&descriptor, 1, Int32(min(left * 1000, 60_000).rounded(.up))) : 0
            if ready > 0 { return }
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 {
                throw PostgresError(sqlState: nil, message: String(cString: strerror(errno)), sql: sql)
            }
            if deadline.timeIntervalSinceNow > 0 { continue }
            isBroken = true
            throw PostgresError(sqlState: nil, message: "the PostgreSQL server did not answer within \(Self.seconds(answerTimeout)) "
                                + "(statementTimeout plus tcpUserTimeout); the connection is dropped and remade for the next operation",
                                sql: sql)
        }
    }

    private func dropped(_ sql: String) -> PostgresError {
        PostgresError(sqlState: nil, message: "the connection to the PostgreSQL server was dropped after it stopped answering", sql: sql)
    }

    /// libpq's message for the last failure on the connection.
    private func lastError(_ sql: String) -> PostgresError {
        PostgresError(sqlState: nil, message: String(cString: PQerrorMessage(connection)), sql: sql)
    }

    private static func seconds(_ interval: TimeInterval) -> String {
        interval == interval.rounded() ? "\(Int(interval)) s" : String(format: "%.1f s", interval)
    }

    private func check(_ result: OpaquePointer?, _ sql: String) throws {
        let status = PQresultStatus(result)
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return }
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        if PostgresStatementCache.meansSessionChanged(state) { statements.stop() }
        let message = result.map { String(cString: PQresultErrorMessage($0)) } ?? String(cString: PQerrorMessage(connection))
        throw PostgresError(sqlState: state, message: message, sql: sql)
    }
}
