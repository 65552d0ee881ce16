/// The statements a connection has prepared on its session, so one that runs again and again (a
/// page's upsert, a lease claim) is parsed and planned once per session instead of at every run:
/// in a cluster of 3,300 feeds, planning alone was a fifth of the server's CPU (issue 40).
///
/// Only statements with parameters are prepared (their text is the same from run to run; values
/// travel apart), and only from their second run, so SQL that is built once never fills the
/// cache; at most ``limit`` per session. A server that forgets them (a pooler handing the
/// session to another client) ends preparing on the connection: ``stop()``.
struct PostgresStatementCache {
    /// How a statement is sent.
    enum Use: Equatable {
        /// Parsed and planned with its run (`PQsendQueryParams`).
        case unnamed
        /// Run by the name it was prepared under.
        case prepared(String)
        /// Prepared under this name, then run by it, in one request.
        case prepare(String)
    }

    /// The most statements prepared on one session.
    static let limit = 256
    /// The most statements remembered as run once and not yet prepared.
    static let seenLimit = 1_024

    private var names: [String: String] = [:]
    private var seenOnce: Set<String> = []
    private var made = 0
    private(set) var isEnabled = true

    /// How to send `sql` with `parameters` parameters now; `.prepare` counts on ``prepared(_:as:)``
    /// once the server accepted it.
    mutating func use(_ sql: String, parameters: Int) -> Use {
        guard isEnabled, parameters > 0 else { return .unnamed }
        if let name = names[sql] { return .prepared(name) }
        guard names.count < Self.limit else { return .unnamed }
        guard seenOnce.remove(sql) != nil else {
            if seenOnce.count >= Self.seenLimit { seenOnce.removeAll() }
            seenOnce.insert(sql)
            return .unnamed
        }
        made += 1
        return .prepare("feedsync_\(made)")
    }

    /// The server prepared `sql` as `name`.
    mutating func prepared(_ sql: String, as name: String) { names[sql] = name }

    /// A new session (a reconnect) holds none of them.
    mutating func forget() { names.removeAll() }

    /// The server lost a prepared statement or refused a name as taken: from now on every
    /// statement is sent unnamed.
    mutating func stop() {
        isEnabled = false
        names.removeAll()
        seenOnce.removeAll()
    }

    /// SQLSTATEs that mean the session is not the one the statements were prepared on.
    static func meansSessionChanged(_ sqlState: String?) -> Bool {
        sqlState == "26000" || sqlState == "42P05"   // invalid_sql_statement_name, duplicate_prepared_statement
    }
}
