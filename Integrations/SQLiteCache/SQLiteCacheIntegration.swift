import Core

/// The `"sqlite"` store integration: `{"integration": "sqlite", "path": "feedsync.sqlite", "busyTimeoutMs": 5000}`.
///
/// `path` is resolved against the config file's folder and defaults to `feedsync.sqlite` there.
public enum SQLiteCacheIntegration {
    public static func makeStore(_ config: ConfigSection, createIfMissing: Bool, log: Logger) throws -> Managed<any FeedStore> {
        let path = try config.path("path") ?? config.context.resolve(path: "feedsync.sqlite")
        let timeout = try config.int("busyTimeoutMs", in: 0...600_000) ?? 5_000
        try config.finish(alsoKnown: ["integration"])
        let store = SQLiteFeedStore(path: path.path, busyTimeoutMilliseconds: Int32(timeout), log: log)
        return Managed(store, lifecycle: SQLiteCacheManager(store: store, create: createIfMissing))
    }
}
