import Core
import Foundation
@testable import SQLiteCache
import Testing

/// What every store promises about the reader listener's accounts: shared by every connection,
/// tokens valid until they expire, feed tokens for their feed only, and an account's removal
/// revoking its tokens. SQLite keeps them in its private sessions file, out of the mirror.
enum ReaderAccountContract {
    static func accountsAreSharedAndTheirRemovalRevokesTheirTokens(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try await other.readerAccounts(at: start).isEmpty)
        #expect(try await store.addReaderAccount("ada", passwordHash: "$argon2id$ada", at: start))
        #expect(try await store.addReaderAccount("bob", passwordHash: "$argon2id$bob", at: start))
        #expect(try await !other.addReaderAccount("ada", passwordHash: "$argon2id$other", at: start), "a name is added once")
        #expect(try await other.passwordHash(ofReaderAccount: "ada") == "$argon2id$ada", "the first hash stays")
        #expect(try await other.passwordHash(ofReaderAccount: "nobody") == nil)

        try await store.saveReaderToken(digest: "d-ada-1", of: "ada", at: start, expiresAt: start + 3_600)
        try await store.saveReaderToken(digest: "d-ada-2", of: "ada", at: start, expiresAt: start + 60)
        try await store.saveReaderToken(digest: "d-bob-1", of: "bob", at: start, expiresAt: start + 3_600)
        #expect(try await other.readerAccount(holdingToken: "d-ada-1", at: start + 30) == "ada")
        #expect(try await other.readerAccount(holdingToken: "d-ada-2", at: start + 30) == "ada")
        #expect(try await other.readerAccount(holdingToken: "d-ada-2", at: start + 60) == nil, "a token is dead at its expiry")
        #expect(try await other.readerAccount(holdingToken: "d-none", at: start) == nil)
        let listed = try await other.readerAccounts(at: start + 120)
        #expect(listed.map { "\($0.name) \($0.liveTokens)" } == ["ada 1", "bob 1"])
        #expect(listed.first?.createdAt == start)

        // A later login forgets the account's expired tokens.
        try await store.saveReaderToken(digest: "d-ada-3", of: "ada", at: start + 120, expiresAt: start + 7_200)
        #expect(try await sqlCount(kind, other, "token_hash = 'd-ada-2'") == 0)

        #expect(try await store.removeReaderAccount("ada"))
        #expect(try await !store.removeReaderAccount("ada"))
        #expect(try await other.readerAccount(holdingToken: "d-ada-1", at: start + 30) == nil, "removal revokes")
        #expect(try await other.readerAccount(holdingToken: "d-ada-3", at: start + 130) == nil)
        #expect(try await other.readerAccount(holdingToken: "d-bob-1", at: start + 30) == "bob")
        #expect(try await other.readerAccounts(at: start).map(\.name) == ["bob"])
        // Added again, the name starts afresh: no token of the old account comes back.
        #expect(try await store.addReaderAccount("ada", passwordHash: "$argon2id$new", at: start))
        #expect(try await other.readerAccount(holdingToken: "d-ada-1", at: start + 30) == nil)
    }

    /// Feed tokens open their feed only, never the API (nor the API's tokens a feed), and are
    /// revoked by feed or with their account.
    static func feedTokensOpenTheirFeedOnly(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let start = Date(timeIntervalSince1970: 1_800_000_000), later = start + 10 * 365 * 86_400
        #expect(try await store.addReaderAccount("ada", passwordHash: "$argon2id$ada", at: start))
        try await store.saveFeedToken(digest: "f-home", of: "ada", feed: "home", at: start, expiresAt: later)
        try await store.saveFeedToken(digest: "f-group", of: "ada", feed: "group/Friends", at: start + 1, expiresAt: later)
        try await store.saveReaderToken(digest: "d-login", of: "ada", at: start, expiresAt: start + 3_600)
        await #expect(throws: ServiceError.self, "no account, no token") {
            try await store.saveFeedToken(digest: "f-x", of: "nobody", feed: "home", at: start, expiresAt: later)
        }
        #expect(try await other.readerAccount(holdingFeedToken: "f-home", feed: "home", at: start + 5) == "ada")
        #expect(try await other.readerAccount(holdingFeedToken: "f-home", feed: "group/Friends", at: start + 5) == nil, "another feed")
        #expect(try await other.readerAccount(holdingToken: "f-home", at: start + 5) == nil, "a feed token is not a login")
        #expect(try await other.readerAccount(holdingFeedToken: "d-login", feed: "home", at: start + 5) == nil, "a login is not a feed token")
        #expect(try await other.readerAccount(holdingFeedToken: "f-home", feed: "home", at: later) == nil, "dead at its expiry")
        #expect(try await other.feedTokens(at: start + 5).map { "\($0.name) \($0.feed)" } == ["ada group/Friends", "ada home"])
        #expect(try await other.readerAccounts(at: start + 5).map(\.liveTokens) == [1], "logins only are counted")
        #expect(try await store.removeFeedTokens(of: "ada", feed: "home") == 1)
        #expect(try await store.removeFeedTokens(of: "ada", feed: "home") == 0)
        #expect(try await other.readerAccount(holdingFeedToken: "f-home", feed: "home", at: start + 5) == nil, "revoked")
        #expect(try await store.removeReaderAccount("ada"))
        #expect(try await other.feedTokens(at: start + 5).isEmpty, "removal revokes feed tokens too")
    }

    /// Rows of the token table matching `condition`: on SQLite in the private sessions file.
    static func sqlCount(_ kind: StoreKind, _ store: any FeedStore, _ condition: String) async throws -> Int {
        let rows = switch kind {
        case .sqlite: try sessionsSQL(store, "SELECT COUNT(*) FROM serve_tokens WHERE \(condition)")
        case .postgres: try await rawSQL(store, "SELECT COUNT(*) FROM feedsync_private.serve_tokens WHERE \(condition)")
        }
        return Int((rows.first?.first ?? nil) ?? "") ?? -1
    }

    /// The rows `sql` reads from a SQLite store's private sessions file.
    static func sessionsSQL(_ store: any FeedStore, _ sql: String) throws -> [[String?]] {
        let db = try SQLiteDatabase(path: try #require(store as? SQLiteFeedStore).path + ".sessions.sqlite")
        db.setBusyTimeout(milliseconds: 5_000)
        return try db.statement(sql).query { row in row.columnNames.indices.map { row.text($0) } }
    }
}

@Suite struct SQLiteReaderAccountContractTests {
    @Test func accountsAreSharedAndTheirRemovalRevokesTheirTokens() async throws {
        try await ReaderAccountContract.accountsAreSharedAndTheirRemovalRevokesTheirTokens(.sqlite)
    }
    @Test func feedTokensOpenTheirFeedOnly() async throws { try await ReaderAccountContract.feedTokensOpenTheirFeedOnly(.sqlite) }

    /// An older store kept the accounts in the mirror: the migration 017 moves them to the
    /// private sessions file, tokens still valid, and leaves no table of them in the mirror.
    @Test func theMigrationMovesTheAccountsOutOfTheMirror() async throws {
        let (older, _) = try await makeStores(.sqlite)
        let sqlite = try #require(older as? SQLiteFeedStore)
        let path = sqlite.path
        for sql in ["CREATE TABLE serve_users (name TEXT PRIMARY KEY, password_hash TEXT NOT NULL, created_at INTEGER NOT NULL)",
                    "CREATE TABLE serve_tokens (token_hash TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)",
                    "INSERT INTO serve_users VALUES ('ada', '$argon2id$ada', 1800000000000)",
                    "INSERT INTO serve_tokens VALUES ('d-ada', 'ada', 1800000000000, 1800003600000)",
                    "DELETE FROM schema_migrations WHERE name = '017_serve_users_private'"] {
            _ = try await rawSQL(older, sql)
        }
        await sqlite.close()
        try? FileManager.default.removeItem(atPath: path + ".sessions.sqlite")
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        #expect(try await rawSQL(store, "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'serve%'") == [["0"]])
        #expect(try await store.passwordHash(ofReaderAccount: "ada") == "$argon2id$ada")
        #expect(try await store.readerAccount(holdingToken: "d-ada", at: Date(timeIntervalSince1970: 1_800_000_060)) == "ada")
        let mirror = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(mirror.range(of: Data("$argon2id$ada".utf8)) == nil, "no hash left in a free page of the mirror")
    }
}

@Suite(.needsPostgres) struct PostgresReaderAccountContractTests {
    @Test func accountsAreSharedAndTheirRemovalRevokesTheirTokens() async throws {
        try await ReaderAccountContract.accountsAreSharedAndTheirRemovalRevokesTheirTokens(.postgres)
    }
    @Test func feedTokensOpenTheirFeedOnly() async throws { try await ReaderAccountContract.feedTokensOpenTheirFeedOnly(.postgres) }
}
