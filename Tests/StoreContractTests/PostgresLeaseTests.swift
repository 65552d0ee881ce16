import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import SQLiteCache
import StoreKit
import Synchronization
import Testing

/// What only a store several workers share promises.
@Suite(.needsPostgres) struct PostgresLeaseTests {
    @Test func aLeaseOfAWorkerThatStoppedRenewingIsTakenOverAfterOnePeriod() async throws {
        let (dead, other) = try await makeWorkers(lease: 1)
        _ = try await dead.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false)
        await dead.close()   // as a killed worker: no renewal, no release
        // close() gives leases back; hold one again without renewal to play the dead worker.
        try await dead.open()
        let lost = try #require(try await dead.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        await dead.stopRenewingForTests()
        let expiry = "SELECT expires_at FROM feed_leases WHERE feed = 'home'"
        let ranOut = try #require(Int64(try await dead.run("reading the lease", expiry).first?[0] ?? ""))
        // The waiter's own deadline: it gives up (nil) if the lease is not free within `wait`.
        let wait: TimeInterval = 600
        let lease = try await other.acquireLease(onFeed: "home", holder: "feedsyncd", wait: wait, onlyIfDue: false)
        #expect(lease?.tookOverFrom?.contains("feedsyncd") == true, "taken over within the waiter's deadline")
        // Measured on the server's clock, from the dead lease's recorded expiry to the new lease's
        // start (its expiry less one period): never before it ran out. How soon after depends on
        // how busy the machine is (30.8 s under a load of 22), so no wall-clock bound is asserted.
        let takenAt = try #require(Int64(try await other.run("reading the lease", expiry).first?[0] ?? "")) - 1_000
        #expect(takenAt >= ranOut, "not taken over before the lease ran out")
        let error = await #expect(throws: ServiceError.self) {
            _ = try await dead.apply(makePage([.upsert(makePost("late"))], cursor: "9"), videos: [], under: lost)
        }
        #expect(error?.code == .locked, "the worker that lost its lease commits nothing more")
    }

    /// A renewal that comes too late (the worker stalled past its lease) finds the lease taken
    /// over; the worker's next commit must still meet the fence, not find no lease to check.
    @Test func aWorkerWhoseLateRenewalFoundItsLeaseGoneCommitsNothing() async throws {
        let (late, other) = try await makeWorkers(lease: 1)
        let lost = try #require(try await late.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        await late.stopRenewingForTests()
        let taken = try await other.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 60, onlyIfDue: false)
        #expect(taken?.tookOverFrom != nil)
        await late.renewLeases()
        let error = await #expect(throws: ServiceError.self) {
            _ = try await late.apply(makePage([.upsert(makePost("late"))], cursor: "9"), videos: [], under: lost)
        }
        #expect(error?.code == .locked)
        let record = await #expect(throws: ServiceError.self) {
            try await late.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home")), under: lost)
        }
        #expect(record?.code == .locked, "nor records a run that would overlap the new holder's")
    }

    /// A daemon that found a feed due at `dueSince` leaves it when another daemon's sync that began
    /// since then succeeded and gave its lease back before recording the next attempt (issue 40:
    /// 187 of 3,300 feeds were synced twice in a cluster run); an older run, or a failed one, does not count.
    @Test func aDaemonClaimLeavesAFeedAnotherDaemonSyncedSinceItWasDue() async throws {
        let (first, second) = try await makeWorkers()
        let due = Date()
        let lease = try #require(try await first.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: due).lease)
        let failed = SyncOutcome(startedAt: due.addingTimeInterval(1), finishedAt: due.addingTimeInterval(2), error: "timed out")
        try await first.recordSync(failed, under: lease)
        await first.release(lease)
        let retry = try #require(try await second.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: due).lease,
                                 "a failed run leaves the feed due")
        try await second.recordSync(SyncOutcome(startedAt: due.addingTimeInterval(3), finishedAt: due.addingTimeInterval(4),
                                                report: SyncReport(feed: "home")), under: retry)
        await second.release(retry)
        #expect(try await first.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: due) == .syncedSince(nextAttempt: nil))
        #expect(try await first.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: due.addingTimeInterval(5)).lease != nil,
                "a run that ended before the feed was due again does not count")
    }

    /// A run under way when this daemon found the feed due counts as well: it began earlier but
    /// ended after (the full 110,000-feed cluster run synced 3 feeds twice this way: a daemon
    /// started a moment after another had begun them).
    @Test func aRunUnderWayWhenTheFeedWasFoundDueCountsAsSyncedSince() async throws {
        let (first, second) = try await makeWorkers()
        let due = Date()
        let lease = try #require(try await first.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: due).lease)
        try await first.recordSync(SyncOutcome(startedAt: due.addingTimeInterval(-1), finishedAt: due.addingTimeInterval(1),
                                               report: SyncReport(feed: "home")), under: lease)
        await first.release(lease)
        #expect(try await second.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: due) == .syncedSince(nextAttempt: nil))
        #expect(try await second.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: due.addingTimeInterval(2)).lease != nil,
                "a run that ended before the feed was found due does not count")
    }

    /// A daemon's claim tells "held by another now" (with the expiry stored for that lease, when
    /// a holder that died leaves the feed) from "synced by another since" (with the next attempt
    /// that daemon recorded), so the daemon looks again at the right time (issue 40: a SIGKILLed
    /// daemon's feeds were left for one feed interval).
    @Test func aDaemonClaimSaysWhetherTheFeedIsHeldOrSyncedAndUntilWhen() async throws {
        let (first, second) = try await makeWorkers(lease: 30)
        let lease = try #require(try await first.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date()).lease)
        let expiry = try #require(Int64(try await first.run("reading the lease", "SELECT expires_at FROM feed_leases WHERE feed = 'home'").first?[0] ?? ""))
        #expect(try await second.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date()) == .heldUntil(StoredTime.date(expiry)))
        try await first.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home")), under: lease)
        await first.release(lease)
        let next = StoredTime.date(StoredTime.milliseconds(Date().addingTimeInterval(3_600)))
        try await first.setNextAttempt(next, ofFeed: "home")
        #expect(try await second.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date()) == .syncedSince(nextAttempt: next))
    }

    @Test func aDroppedConnectionIsRemadeForTheNextOperation() async throws {
        let database = try await PostgresServer.makeDatabase()
        let store = PostgresFeedStore(conninfo: database.url)
        try await store.open()
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "1"))
        // The server ends the store's session, as a restart or a failover would.
        try await database.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        _ = try? await store.cursor(ofFeed: "home")   // may fail: the connection was dropped under it
        #expect(try await store.cursor(ofFeed: "home") == FeedCursor(position: "1"))
        // The new session has the store's settings, and pages commit on it.
        _ = try await store.commit(makePage([.upsert(makePost("p2"))], cursor: "2"))
        #expect(try await store.cursor(ofFeed: "home") == FeedCursor(position: "2"))
    }
}
