import Core
import Foundation
@testable import Sync
import Synchronization
import Testing

/// A video cache and nothing else: the one role ``VideoResolution`` needs.
final class MockVideoCache: VideoCache {
    let log: CallLog
    let resolved: Set<VideoID>
    let unresolved: [VideoID]
    let saved = Mutex<[VideoID]>([])

    init(log: CallLog, resolved: Set<VideoID> = [], unresolved: [VideoID] = []) {
        self.log = log
        self.resolved = resolved
        self.unresolved = unresolved
    }

    func videosToResolve(among ids: [VideoID], inFeed feed: String) -> [VideoID] {
        log.record("videosToResolve(\(feed))")
        return ids.filter { !resolved.contains($0) }
    }

    func unresolvedVideoIDs(inFeed feed: String, limit: Int) -> [VideoID] { Array(unresolved.prefix(limit)) }

    func saveVideos(_ videos: [Video], under lease: FeedLease) -> Int {
        log.record("saveVideos(\(videos.map(\.id.rawValue).joined(separator: ",")))")
        saved.withLock { $0 += videos.map(\.id) }
        return videos.count
    }
}

/// A sweeper and nothing else: the one role ``FullWalkSweep`` needs.
final class MockSweeper: FeedSweeper {
    let log: CallLog
    let counts: (unseen: Int, cached: Int)

    init(log: CallLog, unseen: Int, cached: Int) {
        self.log = log
        self.counts = (unseen, cached)
    }

    func backend(ofFeed feed: String) -> String? { nil }
    func setBackend(_ backend: String, under lease: FeedLease) {}
    func unseenPosts(of walk: FullWalk) -> (unseen: Int, cached: Int) { counts }
    func deleteUnseenPosts(of walk: FullWalk, under lease: FeedLease) -> Int {
        log.record("deleteUnseenPosts")
        return counts.unseen
    }
}

@Suite struct VideoResolutionTests {
    let log = CallLog()

    @Test func onlyVideosTheCacheLacksAndThePageDidNotCarryAreAskedOfTheHost() async throws {
        let cache = MockVideoCache(log: log, resolved: ["v1"])
        let host = MockVideos(log: log, known: [makeVideo("v3")])
        var page = makePage([makePost("p1", videos: ["v1", "v2", "v3"])], cursor: "1", hasMore: false)
        page.videos = [makeVideo("v2")]
        var report = SyncReport(feed: "home")

        let videos = try await VideoResolution(lease: FeedLease(feed: "home", token: "t"), cache: cache, host: host).resolve([page], report: &report)

        #expect(videos.map { $0.map(\.id) } == [["v2", "v3"]])
        #expect(log.all == ["videosToResolve(home)", "videos(v3)"])
        #expect(report.videosResolved == 2 && report.videosUnresolved == 0)
    }

    @Test func pagesThatCommitTogetherAskTheStoreAndTheHostOnceAndAVideoGoesWithTheFirstPageThatNeedsIt() async throws {
        let cache = MockVideoCache(log: log, resolved: ["v1"])
        let host = MockVideos(log: log, known: [makeVideo("v3"), makeVideo("v4")])
        let first = makePage([makePost("p1", videos: ["v1", "v3"]), makePost("p2", videos: ["v2"])], cursor: "1", hasMore: true)
        var second = makePage([makePost("p3", videos: ["v3", "v2", "v4", "v5"])], cursor: "2", hasMore: false)
        // v2 comes with the second page: the host is not asked for it, though the first page refers to it too.
        second.videos = [makeVideo("v2")]
        var report = SyncReport(feed: "home")

        let videos = try await VideoResolution(lease: FeedLease(feed: "home", token: "t"), cache: cache, host: host)
            .resolve([first, second], report: &report)

        #expect(videos.map { $0.map(\.id) } == [["v3"], ["v2", "v4"]])
        #expect(log.all == ["videosToResolve(home)", "videos(v3,v4,v5)"])
        #expect(report.videosResolved == 3 && report.videosUnresolved == 1, "v2 carried, v3 and v4 resolved, v5 unknown to the host")
    }

    @Test func aFailingHostLeavesTheVideosUnresolvedAndSavesNothing() async throws {
        let cache = MockVideoCache(log: log, unresolved: ["v1", "v2"])
        let host = MockVideos(log: log, failure: ServiceError(.unavailable, "resolving videos", "the host is down"))

        let resolved = try await VideoResolution(lease: FeedLease(feed: "home", token: "t"), cache: cache, host: host).retryUnresolved(limit: 10)

        #expect(resolved == 0)
        #expect(cache.saved.withLock { $0 }.isEmpty, "nothing is saved when the host fails")
    }
}

@Suite struct FullWalkSweepTests {
    let log = CallLog()

    @Test func aSweepOverTheAllowedRatioIsRefusedAndDeletesNothing() async throws {
        let sweeper = MockSweeper(log: log, unseen: 3, cached: 4)
        var report = SyncReport(feed: "home")

        let error = await #expect(throws: ServiceError.self) {
            try await FullWalkSweep(lease: FeedLease(feed: "home", token: "t"), store: sweeper, options: SyncEngine.Options()).finish(FullWalk(feed: "home"), report: &report)
        }

        #expect(error?.code == .refused)
        #expect(log.all.isEmpty, "the delete did not run")
    }

    @Test func aWalkThatSkippedAnItemWithoutAnIDDeletesNothingAndSaysWhy() async throws {
        let sweeper = MockSweeper(log: log, unseen: 1, cached: 4)
        var walk = FullWalk(feed: "home")
        var page = makePage([], cursor: "1", hasMore: false)
        page.skipped = [SkippedItem(id: nil, reason: "no id")]
        walk.note(page)
        var report = SyncReport(feed: "home")

        try await FullWalkSweep(lease: FeedLease(feed: "home", token: "t"), store: sweeper, options: SyncEngine.Options()).finish(walk, report: &report)

        #expect(log.all.isEmpty)
        #expect(report.walkedToSweep && report.sweepWithheld?.contains("no id") == true)
    }
}
