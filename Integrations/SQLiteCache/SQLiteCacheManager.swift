import Core

/// Sets up the SQLite cache (open, WAL, migrations) and closes it at teardown.
public struct SQLiteCacheManager: ReadOnlyStoreSetup {
    let store: SQLiteFeedStore
    /// Whether setup may create the database file.
    var create = true

    public var name: String { "sqlite store \(store.path)" }

    public func setUp() async throws { try await store.open(create: create) }

    public func setUpToRead() async throws { try await store.openToRead() }

    public func tearDown() async { await store.close() }
}
