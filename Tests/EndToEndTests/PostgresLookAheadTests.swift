import Foundation
import PostgresTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A daemon that finds feeds another daemon of the cluster synced learns it in one look ahead
/// (``SyncedSinceCheck``) and claims none of them (issue 40: each of three daemons claimed every
/// feed, and two claims of three were lost).
@Suite(.endToEnd, .needsPostgres) struct PostgresLookAheadTests {
    static let feeds = 40

    @Test func aDaemonLeavesTheFeedsAnotherSyncedWithoutClaimingThem() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 3)
        let scratch = try Scratch()
        let config = try scratch.writePostgresConfig(database, baseURL: server.baseURL, feeds: Self.feeds, interval: "1h")
        let first = try DaemonProcess(config: config, in: scratch)
        // Synced, and scheduled an hour ahead, by the first daemon, which keeps running (a daemon
        // that stops clears its schedules for the others).
        let scheduled = try await eventually {
            try await psql(database, "SELECT count(*) FROM feeds WHERE next_attempt_at IS NOT NULL") == "\(Self.feeds)"
        }
        #expect(scheduled, "the first daemon synced every feed: \(first.log.suffix(800))")

        let second = try DaemonProcess(config: config, in: scratch, arguments: ["--log-level", "debug"])
        let left = try await eventually { second.log.components(separatedBy: "event=sync_skipped ").count - 1 == Self.feeds }
        #expect(left, "the second daemon leaves every feed: \(second.log.suffix(1_500))")
        // `sync_start` is logged just before each claim: the second daemon made none.
        #expect(!second.log.contains("event=sync_start "), "\(second.log.suffix(1_500))")
        #expect(second.log.components(separatedBy: "reason=\"another daemon synced it\"").count - 1 == Self.feeds)
        #expect(try await psql(database, "SELECT count(*) FROM sync_runs") == "\(Self.feeds)", "no feed synced twice")
        for daemon in [first, second] { daemon.signal(SIGTERM) }
        for daemon in [first, second] { #expect(await daemon.stopsInTime()) }
    }
}
