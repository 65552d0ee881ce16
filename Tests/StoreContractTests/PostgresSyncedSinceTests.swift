import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import StoreKit
import Testing

/// The bulk look ahead a daemon takes before claiming (``SyncedSinceCheck``): it may skip only
/// what the claim would decline as synced since, and must leave every other feed to the claim.
@Suite(.needsPostgres) struct PostgresSyncedSinceTests {
    /// One feed of each kind a claim tells apart, asked about in one look and then each claimed:
    /// the look names exactly the feeds whose claim answers `syncedSince`, with the same next attempt.
    @Test func theLookAheadNamesExactlyTheFeedsTheClaimWouldLeaveAsSyncedSince() async throws {
        let (other, daemon) = try await makeWorkers(lease: 30)
        let due = Date()
        func run(_ feed: String, ending: TimeInterval, error: String? = nil) async throws {
            let lease = try #require(try await other.acquireLease(onFeed: feed, holder: "feedsyncd", wait: 0, onlyIfDue: false))
            let outcome = error.map { SyncOutcome(startedAt: due.addingTimeInterval(ending - 1), finishedAt: due.addingTimeInterval(ending), error: $0) }
                ?? SyncOutcome(startedAt: due.addingTimeInterval(ending - 1), finishedAt: due.addingTimeInterval(ending), report: SyncReport(feed: feed))
            try await other.recordSync(outcome, under: lease)
            await other.release(lease)
        }
        try await run("synced-since", ending: 1)
        try await run("synced-before", ending: -5)
        try await run("failed-since", ending: 1, error: "timed out")
        try await run("scheduled-ahead", ending: -5)
        let ahead = StoredTime.date(StoredTime.milliseconds(due.addingTimeInterval(3_600)))
        try await other.setNextAttempt(ahead, ofFeed: "scheduled-ahead")
        try await run("scheduled-past", ending: -5)
        try await other.setNextAttempt(due.addingTimeInterval(-60), ofFeed: "scheduled-past")
        // Synced since, and held again now: the claim answers "held" first, so the look leaves it.
        try await run("held-now", ending: 1)
        let held = try #require(try await other.acquireLease(onFeed: "held-now", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        let feeds = ["never-synced", "synced-since", "synced-before", "failed-since", "scheduled-ahead", "scheduled-past", "held-now"]

        let looked = try await daemon.feedsSynced(since: feeds.map { DueFeed(feed: $0, since: due) })
        #expect(Set(looked) == [SyncedFeed(feed: "synced-since", nextAttempt: nil), SyncedFeed(feed: "scheduled-ahead", nextAttempt: ahead)])
        var declined: [SyncedFeed] = []
        for feed in feeds {
            switch try await daemon.claimLease(onFeed: feed, holder: "feedsyncd", wait: 0, dueSince: due) {
            case .syncedSince(let next): declined.append(SyncedFeed(feed: feed, nextAttempt: next))
            case .acquired(let lease): await daemon.release(lease)
            case .heldUntil: #expect(feed == "held-now")
            }
        }
        #expect(Set(looked) == Set(declined), "the look ahead skips what the claim declines as synced since, and nothing else")
        await other.release(held)
    }

    /// The look ahead reads: it takes no lease and writes no row, so a feed it leaves is claimed as before.
    @Test func theLookAheadTakesNoLease() async throws {
        let (_, daemon) = try await makeWorkers()
        #expect(try await daemon.feedsSynced(since: [DueFeed(feed: "home", since: Date())]).isEmpty)
        #expect(try await daemon.feedsSynced(since: []).isEmpty)
        #expect(try await daemon.run("counting leases", "SELECT count(*) FROM feed_leases").first?[0] == "0")
        #expect(try await daemon.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date()).lease != nil)
    }
}
