import Core
import Foundation
import StoreKit

/// Run records and each feed's status, for `feedsync status` and the schedule.
extension SQLiteFeedStore {
    public func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) throws {
        // SQLite's lease is this process's lock on the file, which it cannot lose (see `apply`).
        let feed = lease.feed
        let db = try db("recording the sync of feed \(feed)")
        try storage("recording the sync of feed \(feed)") {
            try db.withTransaction {
                for statement in Self.sql.recordRun(outcome, ofFeed: feed) { try db.run(statement) }
            }
        }
    }

    public func feedStatuses() throws -> [FeedStatus] {
        // One process holds a SQLite store's leases, so no other holder can be named.
        try query("reading feed status", Self.sql.feedStatuses())
    }
}
