import Foundation
import ProcessTestSupport
import SQLiteCache

/// Runs `body` with the path of a new store's file, migrated and closed, for other programs
/// (the sqlite3 tool) to read and write; its scratch folder goes when `body` returns or throws.
func withNewStoreFile<T>(_ prefix: String, _ body: (String) async throws -> T) async throws -> T {
    try await withScratchFolder(prefix) { folder in
        let path = folder.appendingPathComponent("cache.sqlite").path
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        await store.close()
        return try await body(path)
    }
}
