import Core
import Foundation
import StoreKit
import Testing

/// A daemon's claim (``FeedLeases/claimLease(onFeed:holder:wait:dueSince:)``), the same on both
/// stores: a due feed is acquired; one whose next attempt is ahead is left, and the claim names
/// that next attempt, so the daemon looks again then rather than one interval later.
@Suite struct LeaseClaimContractTests {
    @Test(arguments: StoreKind.allCases)
    func aDaemonClaimTakesADueFeedAndNamesTheNextAttemptOfAScheduledOne(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "1"))
        let lease = try #require(try await store.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date()).lease,
                                 "a feed with no next attempt is due")
        try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home")), under: lease)
        await store.release(lease)
        // Stored to the millisecond, as both stores keep times.
        let next = StoredTime.date(StoredTime.milliseconds(Date().addingTimeInterval(3_600)))
        try await store.setNextAttempt(next, ofFeed: "home")
        #expect(try await other.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date()) == .syncedSince(nextAttempt: next))
        // The claim that was declined holds nothing: a pull takes the feed at once.
        let pull = try #require(try await other.acquireLease(onFeed: "home", holder: "feedsync pull", wait: 0, onlyIfDue: false))
        await other.release(pull)
        // Due again (the schedule cleared, as a stopping daemon does): acquired.
        try await store.setNextAttempt(nil, ofFeed: "home")
        let again = try await other.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date())
        #expect(again.lease != nil)
        if let taken = again.lease { await other.release(taken) }
    }
}

/// A run's record carries the feed's backend when it changed (``SyncOutcome/backend``), in one
/// transaction with the run, on both stores; a failed run leaves the stored backend as it was.
@Suite struct RunBackendContractTests {
    @Test(arguments: StoreKind.allCases)
    func aSuccessfulRunRecordsItsBackendAndAFailedOneLeavesIt(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsync pull", wait: 0, onlyIfDue: false))
        try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home"), backend: "api one"),
                                   under: lease)
        #expect(try await store.backend(ofFeed: "home") == "api one")
        try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), error: "timed out", backend: "api two"), under: lease)
        try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home")), under: lease)
        #expect(try await store.backend(ofFeed: "home") == "api one", "a failed run, or one naming none, keeps the stored backend")
        await store.release(lease)
    }
}
