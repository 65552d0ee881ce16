import Core
import Foundation

/// The reader listener's accounts, written once for both stores over the tables each names
/// (``SQLStore/readerAccountTables``). Every write is local state: nothing else holds it.
extension SQLStore {
    public func addReaderAccount(_ name: String, passwordHash: String, at date: Date) throws -> Bool {
        let users = Self.readerAccountTables.users
        return try writingLocalState("adding the reader account \(name)") { db in
            try db.run(Self.sql.addReaderAccount(name, passwordHash: passwordHash, at: date, in: users)) == 1
        }
    }

    public func removeReaderAccount(_ name: String) throws -> Bool {
        let (users, tokens) = Self.readerAccountTables
        return try writingLocalState("removing the reader account \(name)") { db in
            try db.run(Self.sql.removeReaderTokens(of: name, in: tokens))
            return try db.run(Self.sql.removeReaderAccount(name, in: users)) == 1
        }
    }

    public func readerAccounts(at now: Date) throws -> [ReaderAccount] {
        let (users, tokens) = Self.readerAccountTables
        return try query("listing the reader accounts", Self.sql.readerAccounts(at: now, in: users, tokens: tokens))
    }

    public func passwordHash(ofReaderAccount name: String) throws -> String? {
        try query("reading the reader account \(name)", Self.sql.passwordHash(ofReaderAccount: name, in: Self.readerAccountTables.users)).first
    }

    public func saveReaderToken(digest: String, of name: String, at date: Date, expiresAt: Date) throws {
        let tokens = Self.readerAccountTables.tokens
        try writingLocalState("saving a token of the reader account \(name)") { db in
            try db.run(Self.sql.removeReaderTokens(of: name, expiredBy: date, in: tokens))
            try db.run(Self.sql.saveReaderToken(digest: digest, of: name, at: date, expiresAt: expiresAt, in: tokens))
        }
    }

    public func readerAccount(holdingToken digest: String, at now: Date) throws -> String? {
        try query("checking a reader token", Self.sql.readerAccount(holdingToken: digest, at: now, in: Self.readerAccountTables.tokens)).first
    }
}
