import Foundation

/// An account of the reader listener (`feedsync serve-user`), as `serve-user list` shows it.
public struct ReaderAccount: Hashable, Sendable {
    public var name: String
    public var createdAt: Date
    /// How many tokens handed out at its logins have not expired.
    public var liveTokens: Int

    public init(name: String, createdAt: Date, liveTokens: Int) {
        self.name = name
        self.createdAt = createdAt
        self.liveTokens = liveTokens
    }
}

/// A feed token (`feedsync serve-user token`), as `serve-user list` shows it: never the token.
public struct ReaderFeedToken: Hashable, Sendable {
    public var name: String
    /// What it opens: a served feed's path under `/feeds/` without its extension
    /// (`home`, `group/Friends`, `search/rust`, `all`).
    public var feed: String
    public var createdAt: Date

    public init(name: String, feed: String, createdAt: Date) {
        self.name = name
        self.feed = feed
        self.createdAt = createdAt
    }
}

/// The reader listener's accounts, kept with the store so every daemon serving it shares them
/// (SQLite: in its private sessions file, out of the mirror people publish).
///
/// The store keeps only what cannot be turned back into a secret: a password's argon2id hash
/// and a token's SHA-256. Removing an account revokes its tokens in the same transaction.
public protocol ReaderAccountStore: Sendable {
    /// Adds an account with the password hash given.
    ///
    /// - Returns: `false` when an account of that name exists already (it is left as it was).
    func addReaderAccount(_ name: String, passwordHash: String, at date: Date) async throws -> Bool

    /// Removes the account and every token handed out to it.
    ///
    /// - Returns: `false` when there was no such account.
    func removeReaderAccount(_ name: String) async throws -> Bool

    /// Every account, by name.
    func readerAccounts(at now: Date) async throws -> [ReaderAccount]

    /// The account's password hash, or `nil` when there is no such account.
    func passwordHash(ofReaderAccount name: String) async throws -> String?

    /// Records a token handed out to `name` (by its digest), valid until `expiresAt`, and
    /// forgets the account's tokens that expired by `date`.
    func saveReaderToken(digest: String, of name: String, at date: Date, expiresAt: Date) async throws

    /// The account a token (by its digest) was handed out to, while it is valid at `now`.
    func readerAccount(holdingToken digest: String, at now: Date) async throws -> String?

    /// Records a feed token of `name` (by its digest): it opens the served feed `feed` only
    /// (never the API), until `expiresAt`.
    func saveFeedToken(digest: String, of name: String, feed: String, at date: Date, expiresAt: Date) async throws

    /// The account a token of `feed` (by its digest) was handed out to, while it is valid at `now`.
    func readerAccount(holdingFeedToken digest: String, feed: String, at now: Date) async throws -> String?

    /// Revokes `name`'s tokens of `feed`.
    ///
    /// - Returns: how many there were.
    func removeFeedTokens(of name: String, feed: String) async throws -> Int

    /// Every feed token live at `now`, by account and feed.
    func feedTokens(at now: Date) async throws -> [ReaderFeedToken]
}
