import Core
import Foundation
import StoreKit

extension SQLiteFeedStore {
    /// Deletes the feed's rows and its live state in one transaction. The account's session is
    /// not the feed's: it stays for the account's other feeds (`feedsync logout` ends it).
    ///
    /// A sync in another process may be writing a page of the feed: the purge takes the
    /// store's write lock first, as a pull does (waiting as long as the store waits for a busy
    /// database), so no page lands after it.
    public func purge(feed: String) async throws -> Int {
        let operation = "purging feed \(feed)"
        let wait = TimeInterval(busyTimeoutMilliseconds) / 1000
        guard let lease = try await acquireLease(onFeed: feed, holder: "feedsync remove --purge", wait: wait, onlyIfDue: false) else {
            throw ServiceError(.locked, operation, "the store's write lock could not be taken")
        }
        defer { release(lease) }
        return try writing(under: lease, operation) { try Self.deleteRows(ofFeed: feed, on: $0) }
    }
}
