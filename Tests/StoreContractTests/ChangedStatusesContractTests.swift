import Core
import Foundation
import Testing

/// What every store promises about reading only the statuses that changed, or a page of them
/// (a daemon's `/metrics` with more than 10,000 feeds): the feeds whose last success or last
/// error is at or after the time asked for, as a full read shows them, and no others; and a walk
/// by name that meets every feed once.
enum ChangedStatusesContract {
    static func onlyFeedsThatSucceededOrFailedSinceAreRead(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let now = Date(timeIntervalSince1970: 1_900_000_000)
        let runs: [(feed: String, at: Date, error: String?)] = [
            ("old", now.addingTimeInterval(-100), nil), ("fresh", now, nil), ("failed", now.addingTimeInterval(1), "the server answered 500"),
            ("failed-long-ago", now.addingTimeInterval(-50), "the server answered 503"),
        ]
        for run in runs {
            try await underLease(store, run.feed) { lease in
                try await store.recordSync(SyncOutcome(startedAt: run.at.addingTimeInterval(-1), finishedAt: run.at, error: run.error,
                                                       report: run.error == nil ? SyncReport(feed: run.feed) : nil), under: lease)
            }
        }
        let all = try await other.feedStatuses()
        #expect(all.map(\.feed).sorted() == ["failed", "failed-long-ago", "fresh", "old"])

        let changed = try await other.feedStatuses(changedSince: now)
        #expect(changed.map(\.feed).sorted() == ["failed", "fresh"])
        for status in changed {
            let full = try #require(all.first { $0.feed == status.feed })
            #expect(status.lastSuccessAt == full.lastSuccessAt && status.lastErrorAt == full.lastErrorAt
                    && status.consecutiveFailures == full.consecutiveFailures && status.postCount == full.postCount)
        }
        #expect(try await other.feedStatuses(changedSince: now.addingTimeInterval(-60)).map(\.feed).sorted() == ["failed", "failed-long-ago", "fresh"])
        #expect(try await other.feedStatuses(changedSince: now.addingTimeInterval(2)).isEmpty)

        // A walk a page at a time (of 3, then of 1) reads every status once, by name.
        var walked: [String] = []
        for limit in [3, 1] {
            var after: String?
            walked = []
            while true {
                let page = try await other.feedStatuses(after: after, limit: limit)
                #expect(page.count <= limit)
                walked += page.map(\.feed)
                guard page.count == limit, let last = page.last?.feed else { break }
                after = last
            }
            #expect(walked == ["failed", "failed-long-ago", "fresh", "old"], "pages of \(limit)")
        }
    }
}

@Suite struct SQLiteChangedStatusesContractTests {
    @Test func onlyFeedsThatSucceededOrFailedSinceAreRead() async throws {
        try await ChangedStatusesContract.onlyFeedsThatSucceededOrFailedSinceAreRead(.sqlite)
    }
}

@Suite(.needsPostgres) struct PostgresChangedStatusesContractTests {
    @Test func onlyFeedsThatSucceededOrFailedSinceAreRead() async throws {
        try await ChangedStatusesContract.onlyFeedsThatSucceededOrFailedSinceAreRead(.postgres)
    }
}
