import Core
import Foundation

extension SQLiteCacheIntegration {
    /// The SQLite store as the registry lists it: a file beside the config, one daemon at a time.
    public static let descriptor = IntegrationDescriptor(
        name: "sqlite", summary: "a SQLite store",
        example: #"{"integration": "sqlite", "path": "feedsync.sqlite", "busyTimeoutMs": 5000}"#,
        keys: [
            ConfigKey("path", .path, default: "feedsync.sqlite", "the database file, beside its side files (-wal, -shm, .lock, .sessions)"),
            ConfigKey("busyTimeoutMs", .int(0...600_000), default: "5000",
                      "how long a write waits for another process's write lock, in milliseconds"),
        ],
        store: StoreCapability(makeStore: { try makeStore($0, createIfMissing: $1, log: $2) },
                               traits: StoreTraits(coordination: .oneDaemon, keepsLocalFiles: true),
                               newConfigFields: [("path", "feedsync.sqlite")]))
}

extension SQLiteCacheManager: LocalStoreFiles {
    public var databaseFile: String? { store.path == ":memory:" ? nil : store.path }

    public func isStoreFile(named name: String) -> Bool {
        SQLiteFeedStore.isStoreFile(named: name, database: (store.path as NSString).lastPathComponent)
    }
}
