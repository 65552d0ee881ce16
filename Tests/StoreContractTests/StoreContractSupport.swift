import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import SQLiteCache
import Synchronization
import Testing

/// The kinds of store the contract runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

/// Makes two stores of one kind over the same data, as two processes would open them. Where this
/// machine cannot run that kind, the test case is cancelled: it shows as skipped, not passed.
func makeStores(_ kind: StoreKind, lease: TimeInterval = 30, busyMilliseconds: Int32 = 5_000) async throws -> (any FeedStore, any FeedStore) {
    switch kind {
    case .sqlite:
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString).sqlite").path
        let first = SQLiteFeedStore(path: path, busyTimeoutMilliseconds: busyMilliseconds)
        let second = SQLiteFeedStore(path: path, busyTimeoutMilliseconds: busyMilliseconds)
        try await first.open()
        try await second.open()
        return (first, second)
    case .postgres:
        guard await PostgresServer.folder() != nil else { try Test.cancel("needs a PostgreSQL server the tests can start") }
        let url = try await PostgresServer.makeDatabase().url
        let first = PostgresFeedStore(conninfo: url, leasePeriod: lease), second = PostgresFeedStore(conninfo: url, leasePeriod: lease)
        try await first.open()
        try await second.open()
        return (first, second)
    }
}

func makePost(_ id: String, text: String = "hello", at seconds: Double = 1_700_000_000) -> Post {
    Post(id: PostID(id), author: User(id: "u1", handle: "ada", displayName: "Ada"), text: text,
         createdAt: Date(timeIntervalSince1970: seconds))
}

func makePage(_ changes: [FeedChange], cursor: String) -> FeedPage {
    FeedPage(changes: changes, nextCursor: FeedCursor(position: cursor), hasMore: false)
}

/// Runs `writes` holding the feed's lease, as a sync does: a shared store refuses a feed's
/// writes without it.
func underLease<T>(_ store: any FeedLeases, _ feed: String = "home", _ writes: () async throws -> T) async throws -> T {
    try await underLease(store, feed) { _ in try await writes() }
}

/// Runs `writes` given the feed's lease, as a sync does.
func underLease<T>(_ store: any FeedLeases, _ feed: String = "home", _ writes: (FeedLease) async throws -> T) async throws -> T {
    let lease = try #require(try await store.acquireLease(onFeed: feed, holder: "test", wait: 5, onlyIfDue: false))
    do {
        let value = try await writes(lease)
        await store.release(lease)
        return value
    } catch {
        await store.release(lease)
        throw error
    }
}

extension FeedLeases where Self: PageCommitter {
    /// Commits `page` under the feed's lease.
    func commit(_ page: FeedPage, toFeed feed: String = "home") async throws -> PageWriteResult {
        try await underLease(self, feed) { lease in try await self.apply(page, videos: [], under: lease) }
    }
}
