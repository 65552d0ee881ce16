import Core
import Foundation
import StoreKit

extension PostgresFeedStore: FeedPurger {
    /// Deletes the feed's rows, its live state, its lease row and the session older versions
    /// kept for it, in one transaction. The account's session is not the feed's: it stays for
    /// the account's other feeds (`feedsync logout` ends it).
    ///
    /// - Throws: ``ServiceError`` `.locked` while a worker holds the feed's lease.
    public func purge(feed: String) throws -> Int {
        let operation = "purging feed \(feed)"
        let db = try db(operation)
        return try storage(operation) {
            try db.transaction {
                // A worker that holds the feed's lease now may still commit a page: refuse rather than race it.
                let holders = try db.query("SELECT holder FROM feed_leases WHERE feed = $1 AND token IS NOT NULL AND expires_at > "
                                           + "\(Self.nowMs) FOR UPDATE", [feed])
                if let holder = holders.first?.first ?? nil {
                    throw ServiceError(.locked, operation, "\(holder) is syncing it now; try again when that sync is done")
                }
                return try Self.deleteRows(ofFeed: feed, alsoFrom: ["feed_leases", "feedsync_private.sessions"], on: db)
            }
        }
    }
}
