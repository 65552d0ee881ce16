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

/// A daemon's claim reads ahead what its sync reads first (``ClaimPrefetch``): the backend, the
/// cursor, and whether a video waits, answered without a statement while the lease is held and
/// nothing was written under it; after a write, or the release, they are read from the server.
@Suite(.needsPostgres) struct PostgresClaimPrefetchTests {
    /// The statements the daemon sent since recording began, but the renewal of its leases, which
    /// its own timer sends whenever it comes round (a busy machine's test saw one).
    static func reads(of store: PostgresFeedStore) async -> [String] {
        await store.statementsSentForTests.filter { !$0.hasPrefix("UPDATE feed_leases SET expires_at") }
    }

    @Test func theClaimAnswersTheSyncsFirstReadsUntilAWriteUnderItsLease() async throws {
        let (other, daemon) = try await makeWorkers()
        let pull = try #require(try await other.acquireLease(onFeed: "home", holder: "feedsync pull", wait: 0, onlyIfDue: false))
        _ = try await other.apply(makePage([.upsert(makePost("p1"))], cursor: "7"), videos: [], under: pull)
        try await other.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home"), backend: "api"),
                                   under: pull)
        await other.release(pull)

        let lease = try #require(try await daemon.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date()).lease)
        await daemon.recordStatementsForTests()
        #expect(try await daemon.backend(ofFeed: "home") == "api")
        #expect(try await daemon.cursor(ofFeed: "home") == FeedCursor(position: "7"))
        #expect(try await daemon.unresolvedVideoIDs(inFeed: "home", limit: 10) == [])
        #expect(await Self.reads(of: daemon) == [], "answered from the claim's own read")
        // A page under the lease moves the cursor: it is read from the server again.
        var post = makePost("p2")
        post.videoIDs = ["v1"]
        _ = try await daemon.apply(makePage([.upsert(post)], cursor: "8"), videos: [], under: lease)
        await daemon.recordStatementsForTests()
        #expect(try await daemon.cursor(ofFeed: "home") == FeedCursor(position: "8"))
        #expect(await Self.reads(of: daemon).count == 1)
        await daemon.release(lease)

        // A claim that finds a video waiting leaves that to the server's answer.
        let again = try #require(try await other.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date()).lease)
        #expect(try await other.unresolvedVideoIDs(inFeed: "home", limit: 10) == ["v1"])
        await other.release(again)
        await daemon.recordStatementsForTests()
        #expect(try await daemon.cursor(ofFeed: "home") == FeedCursor(position: "8"))
        #expect(await Self.reads(of: daemon).count == 1, "without the lease, read from the server")
    }
}

/// The run's record with the lease given back (``RecordingRelease``): one transaction, kept only
/// behind the lease; the lease is free afterwards either way.
@Suite(.needsPostgres) struct PostgresRecordingReleaseTests {
    @Test func theRecordAndTheReleaseGoTogetherAndALostLeaseKeepsNeither() async throws {
        let (first, second) = try await makeWorkers(lease: 1)
        let lease = try #require(try await first.claimLease(onFeed: "home", holder: "feedsyncd", wait: 0, dueSince: Date()).lease)
        try await first.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: SyncReport(feed: "home"), backend: "api"),
                                   releasing: lease)
        #expect(try await first.run("reading", "SELECT count(*), min(token) FROM feed_leases WHERE feed = 'home'").first == ["1", nil],
                "the lease is free")
        #expect(try await first.run("reading", "SELECT count(*) FROM sync_runs WHERE feed = 'home' AND error IS NULL").first == ["1"])
        #expect(try await first.backend(ofFeed: "home") == "api")
        #expect(await first.heldToken("home") == nil)

        // A lease lost to another worker: nothing recorded, and the other worker's lease stays.
        let lost = try #require(try await first.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        await first.stopRenewingForTests()
        let taken = try #require(try await second.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 60, onlyIfDue: false))
        let error = await #expect(throws: ServiceError.self) {
            try await first.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), error: "late"), releasing: lost)
        }
        #expect(error?.code == .locked)
        #expect(try await first.run("reading", "SELECT count(*) FROM sync_runs WHERE feed = 'home'").first == ["1"])
        #expect(try await first.run("reading", "SELECT token FROM feed_leases WHERE feed = 'home'").first == [taken.token])
        await second.release(taken)
    }
}

/// The lease watch's look (``ExpiredLeaseCheck``): leases held past their expiry, and no other.
@Suite(.needsPostgres) struct PostgresExpiredLeaseTests {
    @Test func theLookNamesLeasesHeldPastTheirExpiryEarliestFirst() async throws {
        let (other, daemon) = try await makeWorkers(lease: 30)
        // Live: held by a worker that renews it. Given back: no token.
        let live = try #require(try await other.acquireLease(onFeed: "live", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        let given = try #require(try await other.acquireLease(onFeed: "given-back", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        await other.release(given)
        // Left by workers that died: still holding a token, their expiries passed (by the server's clock).
        let now = Int64(try #require(try await daemon.run("reading the clock", "SELECT \(PostgresFeedStore.nowMs)").first?[0] ?? nil) ?? "") ?? 0
        for (feed, ago) in [("dead-late", 1_000), ("dead-early", 9_000), ("dead-middle", 5_000)] {
            _ = try await daemon.run("planting a stale lease", """
                INSERT INTO feed_leases (feed, holder, instance, token, expires_at) VALUES ($1, 'feedsyncd (process 1)', 'gone', $2, $3)
                """, [feed, "token-\(feed)", "\(now - Int64(ago))"])
        }

        let expired = try await daemon.expiredLeases(limit: 10)
        #expect(expired.map(\.feed) == ["dead-early", "dead-middle", "dead-late"])
        #expect(expired.first?.expiry == StoredTime.date(now - 9_000))
        #expect(try await daemon.expiredLeases(limit: 2).map(\.feed) == ["dead-early", "dead-middle"])
        // It only reads: the claim still takes the stale lease over.
        let taken = try await daemon.claimLease(onFeed: "dead-early", holder: "feedsyncd", wait: 0, dueSince: Date())
        #expect(taken.lease?.tookOverFrom?.contains("process 1") == true)
        #expect(try await daemon.expiredLeases(limit: 10).map(\.feed) == ["dead-middle", "dead-late"])
        await other.release(live)
        if let lease = taken.lease { await daemon.release(lease) }
    }
}
