import Core

extension PostgresStoreIntegration {
    /// The PostgreSQL store as the registry lists it: a server several daemons share under leases.
    public static let descriptor = IntegrationDescriptor(
        name: "postgres", summary: "a PostgreSQL store several daemons share",
        example: #"{"integration": "postgres", "url": "postgresql://feedsync@db.internal/feedsync", "passwordEnv": "PGPASSWORD"}"#,
        keys: [
            ConfigKey("url", .uri, .required, "a libpq URI (postgresql://…), without a password"),
        ] + ConfigKey.secret("password", "the password (a socket with peer authentication needs none)", optional: true) + [
            ConfigKey("requireTLS", .bool, default: "true", "whether a server reached over the network must be reached with TLS"),
            ConfigKey("lease", .duration(1...3_600), default: "30s", "how long a daemon's claim on a feed lasts unless renewed"),
            ConfigKey("keepalives", .bool, default: "true", "TCP keepalives on the connection"),
            ConfigKey("keepalivesIdle", .duration(1...3_600), default: "15s", "idle time before the first keepalive probe"),
            ConfigKey("tcpUserTimeout", .duration(1...3_600), default: "20s", "how long sent data may go unacknowledged before the connection drops"),
            ConfigKey("statementTimeout", .duration(1...86_400), default: "30s", "the longest one statement may run"),
            ConfigKey("lockTimeout", .duration(1...86_400), default: "10s", "the longest a statement waits for a row another transaction holds"),
        ],
        store: StoreCapability(makeStore: { try makeStore($0, createIfMissing: $1, log: $2) },
                               traits: StoreTraits(coordination: .leases, keepsLocalFiles: false)))
}
