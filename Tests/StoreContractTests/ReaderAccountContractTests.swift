import Core
import Foundation
import Testing

/// What every store promises about the reader listener's accounts: shared by every connection,
/// tokens valid until they expire, and an account's removal revoking its tokens.
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

    /// Rows of the token table matching `condition`.
    static func sqlCount(_ kind: StoreKind, _ store: any FeedStore, _ condition: String) async throws -> Int {
        let table = kind == .sqlite ? "serve_tokens" : "feedsync_private.serve_tokens"
        let rows = try await rawSQL(store, "SELECT COUNT(*) FROM \(table) WHERE \(condition)")
        return Int((rows.first?.first ?? nil) ?? "") ?? -1
    }
}

@Suite struct SQLiteReaderAccountContractTests {
    @Test func accountsAreSharedAndTheirRemovalRevokesTheirTokens() async throws {
        try await ReaderAccountContract.accountsAreSharedAndTheirRemovalRevokesTheirTokens(.sqlite)
    }
}

@Suite(.needsPostgres) struct PostgresReaderAccountContractTests {
    @Test func accountsAreSharedAndTheirRemovalRevokesTheirTokens() async throws {
        try await ReaderAccountContract.accountsAreSharedAndTheirRemovalRevokesTheirTokens(.postgres)
    }
}
