import Core
import Foundation
import StoreKit

/// Each feed's status, for `feedsync status` and the schedule; run records are ``SQLStore``'s `recordSync(_:under:)`.
extension SQLiteFeedStore {
    public func feedStatuses() throws -> [FeedStatus] {
        // One process holds a SQLite store's leases, so no other holder can be named.
        try query("reading feed status", Self.sql.feedStatuses())
    }

    public func feedStatuses(changedSince since: Date) throws -> [FeedStatus] {
        try query("reading feed status", Self.sql.feedStatuses(changedSince: since))
    }

    public func feedStatuses(after name: String?, limit: Int) throws -> [FeedStatus] {
        try query("reading feed status", Self.sql.feedStatuses(after: name, limit: limit))
    }
}
