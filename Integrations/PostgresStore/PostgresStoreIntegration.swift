import Core
import Foundation

/// The `"postgres"` store integration:
/// `{"integration": "postgres", "url": "postgresql://feedsync@db.internal/feedsync", "passwordEnv": "PGPASSWORD"}`.
///
/// `url` is a libpq URI; a Unix socket is `postgresql:///feedsync?host=/run/postgresql`. A
/// server reached over the network must use TLS: `sslmode=verify-full` is added when the URL
/// names none, and a weaker one is refused unless `"requireTLS": false`. The password is
/// optional (`passwordEnv` or `passwordFile`); `lease` (default `"30s"`) bounds a lease.
/// `keepalives` (default `true`), `keepalivesIdle` (`"15s"`), `tcpUserTimeout` (`"20s"`),
/// `statementTimeout` (`"30s"`) and `lockTimeout` (`"10s"`) bound how long a silent server or
/// link can hold the store up (``PostgresLiveness``).
public enum PostgresStoreIntegration {
    /// The store logs nothing yet: its migrations are quick, and its lease renewals are retried quietly.
    public static func makeStore(_ config: ConfigSection, createIfMissing: Bool, log _: Logger) throws -> Managed<any FeedStore> {
        guard let url = try config.nonEmptyString("url") else { throw config.error("url", "is required: a postgresql:// URL") }
        guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://"),
              let components = URLComponents(string: url) else {
            throw config.error("url", "\"\(Terminal.safe(url, limit: 120))\" is not a postgresql:// URL")
        }
        guard components.password == nil else {
            // Not echoed: the value holds the password.
            throw config.error("url", "holds a password; put it in the environment variable named by \"passwordEnv\" "
                               + "(or a file named by \"passwordFile\") instead")
        }
        let requireTLS = try config.bool("requireTLS") ?? true
        let lease = try config.duration("lease", in: 1...3_600) ?? 30
        let defaults = PostgresLiveness()
        let liveness = PostgresLiveness(keepalives: try config.bool("keepalives") ?? defaults.keepalives,
                                        keepalivesIdle: try config.duration("keepalivesIdle", in: 1...3_600) ?? defaults.keepalivesIdle,
                                        tcpUserTimeout: try config.duration("tcpUserTimeout", in: 1...3_600) ?? defaults.tcpUserTimeout,
                                        statementTimeout: try config.duration("statementTimeout", in: 1...86_400) ?? defaults.statementTimeout,
                                        lockTimeout: try config.duration("lockTimeout", in: 1...86_400) ?? defaults.lockTimeout)
        let password = config.has("passwordEnv") || config.has("passwordFile") ? try config.secret("password").revealed : nil
        try config.finish(alsoKnown: ["integration"])
        let socketHost = components.queryItems?.first { $0.name == "host" }?.value
        let host = socketHost ?? components.host ?? ""
        let local = host.isEmpty || host.hasPrefix("/") || ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
        var conninfo = url
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value
        if !local {
            if let mode, !["verify-full", "verify-ca", "require"].contains(mode), requireTLS {
                throw config.error("url", "sslmode=\(mode) sends the mirror and its tokens unencrypted to \(host); use sslmode=verify-full, "
                                   + "or set \"requireTLS\": false to accept that")
            }
            if mode == nil && requireTLS { conninfo += (conninfo.contains("?") ? "&" : "?") + "sslmode=verify-full" }
        }
        // A server that does not answer fails the connection in 10 s rather than hanging the store.
        if components.queryItems?.contains(where: { $0.name == "connect_timeout" }) != true {
            conninfo += (conninfo.contains("?") ? "&" : "?") + "connect_timeout=10"
        }
        let store = PostgresFeedStore(conninfo: conninfo, password: password, leasePeriod: lease, liveness: liveness)
        return Managed(store, lifecycle: PostgresStoreManager(store: store, name: "postgres store \(redacted(components))"))
    }

    /// The URL without any password, for messages.
    private static func redacted(_ components: URLComponents) -> String {
        var shown = components
        shown.password = nil
        return shown.string ?? "postgresql://"
    }
}

/// Connects to the PostgreSQL store (and migrates it) at setup; gives back leases and closes at teardown.
public struct PostgresStoreManager: ReadOnlyStoreSetup {
    let store: PostgresFeedStore
    public let name: String

    public func setUp() async throws { try await store.open() }

    public func setUpToRead() async throws { try await store.openToRead() }

    public func tearDown() async { await store.close() }
}
