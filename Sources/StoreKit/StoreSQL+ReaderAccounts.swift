import Core
import Foundation

/// The reader listener's accounts and tokens, in tables whose name each store gives (SQLite's
/// `serve_users` in its private sessions file, PostgreSQL's in the schema a read-only role is
/// not granted). A token row with a `feed` is a feed token: it opens that served feed only.
extension StoreSQL {
    /// Adds an account unless one of that name exists; one row returned when it was added.
    public func addReaderAccount(_ name: String, passwordHash: String, at date: Date, in users: String) -> StoreStatement {
        StoreStatement(dialect.render("""
            INSERT INTO \(users) (name, password_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING 1
            """), [.text(name), .text(passwordHash), .integer(StoredTime.milliseconds(date))])
    }

    /// Removes an account; one row returned when there was one.
    public func removeReaderAccount(_ name: String, in users: String) -> StoreStatement {
        StoreStatement(dialect.render("DELETE FROM \(users) WHERE name = $1 RETURNING 1"), [.text(name)])
    }

    /// Removes every token of `name`.
    public func removeReaderTokens(of name: String, in tokens: String) -> StoreStatement {
        StoreStatement(dialect.render("DELETE FROM \(tokens) WHERE name = $1"), [.text(name)])
    }

    /// Removes the tokens of `name` that expired by `date`.
    public func removeReaderTokens(of name: String, expiredBy date: Date, in tokens: String) -> StoreStatement {
        StoreStatement(dialect.render("DELETE FROM \(tokens) WHERE name = $1 AND expires_at <= $2"),
                       [.text(name), .integer(StoredTime.milliseconds(date))])
    }

    /// Every account with its count of live login tokens, by name.
    public func readerAccounts(at now: Date, in users: String, tokens: String) -> StoreQuery<ReaderAccount> {
        StoreQuery(dialect.render("""
            SELECT u.name, u.created_at, (SELECT COUNT(*) FROM \(tokens) t WHERE t.name = u.name AND t.expires_at > $1 AND t.feed IS NULL)
            FROM \(users) u ORDER BY u.name
            """), [.integer(StoredTime.milliseconds(now))]) { row in
            ReaderAccount(name: row.text(0) ?? "", createdAt: StoredTime.date(row.integer(1) ?? 0), liveTokens: Int(row.integer(2) ?? 0))
        }
    }

    /// The account's password hash.
    public func passwordHash(ofReaderAccount name: String, in users: String) -> StoreQuery<String> {
        StoreQuery(dialect.render("SELECT password_hash FROM \(users) WHERE name = $1"), [.text(name)]) { $0.text(0) ?? "" }
    }

    /// Records a token's digest.
    public func saveReaderToken(digest: String, of name: String, at date: Date, expiresAt: Date, in tokens: String) -> StoreStatement {
        StoreStatement(dialect.render("""
            INSERT INTO \(tokens) (token_hash, name, created_at, expires_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (token_hash) DO NOTHING
            """), [.text(digest), .text(name), .integer(StoredTime.milliseconds(date)), .integer(StoredTime.milliseconds(expiresAt))])
    }

    /// The account holding a login token that is valid at `now` (never a feed token).
    public func readerAccount(holdingToken digest: String, at now: Date, in tokens: String) -> StoreQuery<String> {
        StoreQuery(dialect.render("SELECT name FROM \(tokens) WHERE token_hash = $1 AND expires_at > $2 AND feed IS NULL"),
                   [.text(digest), .integer(StoredTime.milliseconds(now))]) { $0.text(0) ?? "" }
    }

    /// Records a feed token's digest: it opens `feed` only, until `expiresAt`.
    public func saveFeedToken(digest: String, of name: String, feed: String, at date: Date, expiresAt: Date, in tokens: String) -> StoreStatement {
        StoreStatement(dialect.render("""
            INSERT INTO \(tokens) (token_hash, name, created_at, expires_at, feed) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (token_hash) DO NOTHING
            """), [.text(digest), .text(name), .integer(StoredTime.milliseconds(date)), .integer(StoredTime.milliseconds(expiresAt)), .text(feed)])
    }

    /// The account holding a token of `feed` that is valid at `now`.
    public func readerAccount(holdingFeedToken digest: String, feed: String, at now: Date, in tokens: String) -> StoreQuery<String> {
        StoreQuery(dialect.render("SELECT name FROM \(tokens) WHERE token_hash = $1 AND feed = $2 AND expires_at > $3"),
                   [.text(digest), .text(feed), .integer(StoredTime.milliseconds(now))]) { $0.text(0) ?? "" }
    }

    /// Removes `name`'s tokens of `feed`; one row returned for each.
    public func removeFeedTokens(of name: String, feed: String, in tokens: String) -> StoreStatement {
        StoreStatement(dialect.render("DELETE FROM \(tokens) WHERE name = $1 AND feed = $2 RETURNING 1"), [.text(name), .text(feed)])
    }

    /// Every live feed token, by account, feed and time.
    public func feedTokens(at now: Date, in tokens: String) -> StoreQuery<ReaderFeedToken> {
        StoreQuery(dialect.render("""
            SELECT name, feed, created_at FROM \(tokens) WHERE feed IS NOT NULL AND expires_at > $1 ORDER BY name, feed, created_at
            """), [.integer(StoredTime.milliseconds(now))]) { row in
            ReaderFeedToken(name: row.text(0) ?? "", feed: row.text(1) ?? "", createdAt: StoredTime.date(row.integer(2) ?? 0))
        }
    }
}
