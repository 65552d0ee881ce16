import Foundation

/// How long the PostgreSQL store waits on the server and the network before it calls the
/// connection dead: a half-open socket (a server or a link that vanished without a word) must
/// not block syncing, lease renewal, the heartbeat or shutdown for minutes.
///
/// The TCP settings are libpq connection options; the timeouts are the session's settings.
/// A `url` that names any of them (`?keepalives_idle=5`, `?options=-c statement_timeout=…`)
/// wins over these.
public struct PostgresLiveness: Sendable, Equatable {
    /// TCP keepalives on the connection (`keepalives`).
    public var keepalives: Bool
    /// Idle time before the first keepalive probe (`keepalives_idle`); probes then follow every
    /// ``keepaliveInterval`` and the connection is dropped after ``keepaliveCount`` unanswered.
    public var keepalivesIdle: TimeInterval
    /// How long sent data may stay unacknowledged before the kernel drops the connection (`tcp_user_timeout`).
    public var tcpUserTimeout: TimeInterval
    /// The longest a statement may run on the server before it cancels it (`statement_timeout`).
    public var statementTimeout: TimeInterval
    /// The longest a statement waits for a lock a concurrent transaction holds (`lock_timeout`).
    public var lockTimeout: TimeInterval

    static let keepaliveInterval = 5
    static let keepaliveCount = 3

    public init(keepalives: Bool = true, keepalivesIdle: TimeInterval = 15, tcpUserTimeout: TimeInterval = 20,
                statementTimeout: TimeInterval = 30, lockTimeout: TimeInterval = 10) {
        self.keepalives = keepalives
        self.keepalivesIdle = keepalivesIdle
        self.tcpUserTimeout = tcpUserTimeout
        self.statementTimeout = statementTimeout
        self.lockTimeout = lockTimeout
    }

    /// The longest the store waits for one answer (or to send one request) before it drops the
    /// connection: the server's own limit plus the network's. A server that has not answered by
    /// then cancelled nothing it could still report, so the link is taken for dead.
    public var answerTimeout: TimeInterval { statementTimeout + tcpUserTimeout }

    /// libpq's connection options, as key and value.
    var connectionOptions: [(String, String)] {
        [("keepalives", keepalives ? "1" : "0"),
         ("keepalives_idle", "\(max(1, Int(keepalivesIdle.rounded())))"),
         ("keepalives_interval", "\(Self.keepaliveInterval)"),
         ("keepalives_count", "\(Self.keepaliveCount)"),
         ("tcp_user_timeout", "\(max(1, Int((tcpUserTimeout * 1000).rounded())))")]
    }

    /// The session settings, as libpq's `options` (`-c name=value`).
    var sessionSettings: String {
        "-c statement_timeout=\(Int((statementTimeout * 1000).rounded())) -c lock_timeout=\(Int((lockTimeout * 1000).rounded()))"
    }
}
