import Core
import Foundation
@testable import PostgresStore
@testable import SQLiteCache
import Testing

/// A store an older feedsync wrote, whose daemon made `live_state` on first use (outside the
/// migrations, with the statement below), opened by this version: the migration that makes the
/// table (SQLite 013, PostgreSQL 007) finds it there and keeps it and its rows.
enum LiveStateMigrationContract {
    /// The statement earlier versions ran before every live state (SQLite's `INTEGER`, PostgreSQL's `BIGINT`).
    static func firstUse(_ kind: StoreKind) -> String {
        "CREATE TABLE IF NOT EXISTS live_state (feed TEXT PRIMARY KEY, state TEXT NOT NULL, at \(kind == .sqlite ? "INTEGER" : "BIGINT") NOT NULL)"
    }

    /// Takes a store of this version back to what an older one left: the last migration not
    /// applied (nor what it made), and `live_state` made on first use, with a row.
    static func makeOlderStore(_ kind: StoreKind) async throws -> any FeedStore {
        let (store, _) = try await makeStores(kind)
        let undo = switch kind {
        case .sqlite: ["DROP TABLE live_state", "DELETE FROM schema_migrations WHERE name = '013_live_state'"]
        case .postgres: ["DROP TABLE live_state", "DROP TRIGGER users_au_profile ON users", "DROP FUNCTION users_au_profile()",
                         "DELETE FROM schema_migrations WHERE name = '007_live_state_profile_trigger'"]
        }
        for sql in undo + [firstUse(kind), "INSERT INTO live_state (feed, state, at) VALUES ('social', 'live since 2026-11-25T10:00:00Z', 1764064800000)"] {
            _ = try await rawSQL(store, sql)
        }
        return store
    }

    static func aTableMadeOnFirstUseIsKeptWithItsRowsByTheMigration(_ kind: StoreKind) async throws {
        let older = try await makeOlderStore(kind)
        let migrations = "SELECT COUNT(*) FROM schema_migrations"
        let before = try await rawSQL(older, migrations)
        let store: any FeedStore
        switch kind {
        case .sqlite:
            let sqlite = SQLiteFeedStore(path: try #require(older as? SQLiteFeedStore).path)
            try await sqlite.open()
            store = sqlite
        case .postgres:
            let postgres = PostgresFeedStore(conninfo: try #require(older as? PostgresFeedStore).conninfo)
            try await postgres.open()
            store = postgres
        }
        let count = { (rows: [[String?]]) in rows.first?.first.flatMap { $0.flatMap { Int($0) } } ?? 0 }
        #expect(count(try await rawSQL(store, migrations)) == count(before) + 1, "the one migration applied")
        #expect(try await store.liveStates() == ["social": "live since 2026-11-25T10:00:00Z"], "the row made before is kept")
        try await store.setLiveState("polling: the connection was refused", ofFeed: "tags")
        try await store.setLiveState(nil, ofFeed: "social")
        #expect(try await store.liveStates() == ["tags": "polling: the connection was refused"])
        // The profile trigger came with PostgreSQL's migration (SQLite's has had it since 008).
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "1"))
        _ = try await rawSQL(store, "UPDATE users SET handle = 'lovelace' WHERE id = 'u1'")
        #expect(try await rawSQL(store, "SELECT author_handle FROM posts") == [["lovelace"]])
    }
}

@Suite struct SQLiteLiveStateMigrationTests {
    @Test func aTableMadeOnFirstUseIsKeptWithItsRowsByTheMigration() async throws {
        try await LiveStateMigrationContract.aTableMadeOnFirstUseIsKeptWithItsRowsByTheMigration(.sqlite)
    }
}

@Suite(.needsPostgres) struct PostgresLiveStateMigrationTests {
    @Test func aTableMadeOnFirstUseIsKeptWithItsRowsByTheMigration() async throws {
        try await LiveStateMigrationContract.aTableMadeOnFirstUseIsKeptWithItsRowsByTheMigration(.postgres)
    }
}
