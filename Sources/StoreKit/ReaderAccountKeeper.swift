import Core
import Foundation

/// A store that keeps the reader listener's accounts and tokens (``Core/ReaderAccountStore``)
/// in SQL: the role is written once, here, over the connection and tables the store gives.
/// PostgreSQL keeps them in its private schema; SQLite in its private sessions file, since
/// people publish the database itself.
public protocol ReaderAccountKeeper: Actor, ReaderAccountStore {
    /// The shared statements in the dialect of the connection that holds the accounts.
    static var accountSQL: StoreSQL { get }

    /// The tables of the accounts and of their tokens.
    static var readerAccountTables: (users: String, tokens: String) { get }

    /// Runs `body` on the connection that holds the accounts: in one transaction, committed
    /// durably, when `writing`.
    ///
    /// - Throws: ``Core/ServiceError`` `.storage` naming `operation` and the reason.
    func withReaderAccounts<T>(_ operation: @autoclosure () -> String, writing: Bool, _ body: (any SQLConnection) throws -> T) throws -> T
}

extension ReaderAccountKeeper {
    public func addReaderAccount(_ name: String, passwordHash: String, at date: Date) throws -> Bool {
        let users = Self.readerAccountTables.users
        return try withReaderAccounts("adding the reader account \(name)", writing: true) { db in
            try db.run(Self.accountSQL.addReaderAccount(name, passwordHash: passwordHash, at: date, in: users)) == 1
        }
    }

    public func removeReaderAccount(_ name: String) throws -> Bool {
        let (users, tokens) = Self.readerAccountTables
        return try withReaderAccounts("removing the reader account \(name)", writing: true) { db in
            try db.run(Self.accountSQL.removeReaderTokens(of: name, in: tokens))
            return try db.run(Self.accountSQL.removeReaderAccount(name, in: users)) == 1
        }
    }

    public func readerAccounts(at now: Date) throws -> [ReaderAccount] {
        let (users, tokens) = Self.readerAccountTables
        return try withReaderAccounts("listing the reader accounts", writing: false) { try $0.query(Self.accountSQL.readerAccounts(at: now, in: users, tokens: tokens)) }
    }

    public func passwordHash(ofReaderAccount name: String) throws -> String? {
        let users = Self.readerAccountTables.users
        return try withReaderAccounts("reading the reader account \(name)", writing: false) {
            try $0.query(Self.accountSQL.passwordHash(ofReaderAccount: name, in: users)).first
        }
    }

    public func saveReaderToken(digest: String, of name: String, at date: Date, expiresAt: Date) throws {
        let tokens = Self.readerAccountTables.tokens
        try withReaderAccounts("saving a token of the reader account \(name)", writing: true) { db in
            try db.run(Self.accountSQL.removeReaderTokens(of: name, expiredBy: date, in: tokens))
            try db.run(Self.accountSQL.saveReaderToken(digest: digest, of: name, at: date, expiresAt: expiresAt, in: tokens))
        }
    }

    public func readerAccount(holdingToken digest: String, at now: Date) throws -> String? {
        let tokens = Self.readerAccountTables.tokens
        return try withReaderAccounts("checking a reader token", writing: false) {
            try $0.query(Self.accountSQL.readerAccount(holdingToken: digest, at: now, in: tokens)).first
        }
    }

    public func saveFeedToken(digest: String, of name: String, feed: String, at date: Date, expiresAt: Date) throws {
        let (users, tokens) = Self.readerAccountTables
        try withReaderAccounts("saving a feed token of the reader account \(name)", writing: true) { db in
            // Checked in the same transaction, so a token never outlives a removal begun meanwhile.
            guard try !db.query(Self.accountSQL.passwordHash(ofReaderAccount: name, in: users)).isEmpty else {
                throw ServiceError(.notFound, "making a feed token", "there is no reader account \(name)")
            }
            try db.run(Self.accountSQL.saveFeedToken(digest: digest, of: name, feed: feed, at: date, expiresAt: expiresAt, in: tokens))
        }
    }

    public func readerAccount(holdingFeedToken digest: String, feed: String, at now: Date) throws -> String? {
        let tokens = Self.readerAccountTables.tokens
        return try withReaderAccounts("checking a feed token", writing: false) {
            try $0.query(Self.accountSQL.readerAccount(holdingFeedToken: digest, feed: feed, at: now, in: tokens)).first
        }
    }

    public func removeFeedTokens(of name: String, feed: String) throws -> Int {
        let tokens = Self.readerAccountTables.tokens
        return try withReaderAccounts("revoking the feed tokens of \(name)", writing: true) {
            try $0.run(Self.accountSQL.removeFeedTokens(of: name, feed: feed, in: tokens))
        }
    }

    public func feedTokens(at now: Date) throws -> [ReaderFeedToken] {
        let tokens = Self.readerAccountTables.tokens
        return try withReaderAccounts("listing the feed tokens", writing: false) { try $0.query(Self.accountSQL.feedTokens(at: now, in: tokens)) }
    }
}
