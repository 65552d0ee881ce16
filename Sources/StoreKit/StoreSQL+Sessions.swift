import Core
import Foundation

/// Sessions: one per account, in a table each store keeps apart from the mirror (SQLite's in a
/// private file beside it, PostgreSQL's in a schema a read-only role is not granted).
extension StoreSQL {
    /// The session saved for `account` in `table`.
    public func session(of account: AccountKey, in table: String) -> StoreQuery<Session> {
        StoreQuery(dialect.render("""
            SELECT access_token, refresh_token, expires_at FROM \(table) WHERE integration = $1 AND server = $2 AND account = $3
            """), [.text(account.integration), .text(account.server), .text(account.account)]) { row in
            Session(accessToken: Secret(row.text(0) ?? ""), refreshToken: row.text(1).map { Secret($0) },
                    expiresAt: row.integer(2).map(StoredTime.date))
        }
    }

    /// Saves `account`'s session in `table`, replacing the one it had.
    public func saveSession(_ session: Session, of account: AccountKey, in table: String) -> StoreStatement {
        StoreStatement(dialect.render("""
            INSERT INTO \(table) (integration, server, account, access_token, refresh_token, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (integration, server, account) DO UPDATE SET access_token = excluded.access_token,
                refresh_token = excluded.refresh_token, expires_at = excluded.expires_at
            """), [.text(account.integration), .text(account.server), .text(account.account), .text(session.accessToken.revealed),
                   .text(session.refreshToken?.revealed), .integer(session.expiresAt.map(StoredTime.milliseconds))])
    }
}
