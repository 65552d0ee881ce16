import Core
import Foundation
import Synchronization
import Sync
import Testing

/// Numbered gates a test holds commits at: a commit ``pass(_:)``es its gate once the test has
/// ``open(_:)``ed it, and the test can wait until a commit has ``arrived(_:)`` at its gate.
actor CommitGates {
    private var opened: Set<Int> = []
    private var reached: Set<Int> = []
    private var passers: [Int: CheckedContinuation<Void, Never>] = [:]
    private var watchers: [Int: CheckedContinuation<Void, Never>] = [:]

    func pass(_ number: Int) async {
        reached.insert(number)
        watchers.removeValue(forKey: number)?.resume()
        guard !opened.contains(number) else { return }
        await withCheckedContinuation { passers[number] = $0 }
    }

    func open(_ number: Int) {
        opened.insert(number)
        passers.removeValue(forKey: number)?.resume()
    }

    func arrived(_ number: Int) async {
        guard !reached.contains(number) else { return }
        await withCheckedContinuation { watchers[number] = $0 }
    }
}

/// A live stream's batches, committed by the same writer as a polled page: under the feed's
/// lease, with the videos, skipped items, renames and stream position of the batch, and never
/// with a cursor.
@Suite struct LiveCommitTests {
    let log = CallLog()
    let renamedAt = Date(timeIntervalSince1970: 1_800_000_000)

    func makeEngine(store: MockStore, posts: MockPosts? = nil, videos: MockVideos? = nil) -> SyncEngine {
        let services = SyncEngine.Services(authentication: nil, posts: posts ?? MockPosts(log: log, []),
                                           videos: videos ?? MockVideos(log: log), store: store, requests: RequestCounter())
        var options = SyncEngine.Options()
        options.lockHolder = "feedsyncd"
        return SyncEngine(feed: "home", services: services, options: options, sleep: { _ in })
    }

    @Test func aBatchFoldsEachPostsChangesIntoItsLastInTheOrderPostsFirstChanged() {
        let edited = makePost("p1", text: "edited")
        let skipped = SkippedItem(id: "p9", reason: "created_at is not a time", postID: "p9")
        let batch = LiveBatch([.connected, .upserted(makePost("p1"), videos: [makeVideo("v1")]), .upserted(makePost("p2"), videos: []),
                               .position("10"), .skipped(skipped), .upserted(edited, videos: [makeVideo("v1"), makeVideo("v2")]),
                               .deleted("p2"), .renamed("u1", handle: "ada.new", at: renamedAt), .position("12")])

        #expect(batch.page.changes == [.upsert(edited), .delete("p2")])
        #expect(batch.page.videos.map(\.id) == ["v1", "v2"])
        #expect(batch.page.skipped == [skipped])
        #expect(batch.page.renames == [AuthorRename(author: "u1", handle: "ada.new", at: renamedAt)])
        #expect(batch.page.streamPosition == "12")
        #expect(batch.page.nextCursor == nil && !batch.page.hasMore && !batch.page.missingMeansDeleted)
        #expect(LiveBatch([.connected]).isEmpty && !LiveBatch([.skipped(skipped)]).isEmpty && !LiveBatch([.position("1")]).isEmpty)
    }

    @Test func aBatchIsCommittedUnderTheFeedsLeaseAndLeavesTheCursorAsItWas() async throws {
        let store = MockStore(log: log, cursor: FeedCursor(position: "7"))
        let skipped = SkippedItem(id: "p9", reason: "created_at is not a time", postID: "p9")
        let reported = Mutex<[SkippedItem]>([])

        let report = try #require(try await makeEngine(store: store).commit(
            LiveBatch([.upserted(makePost("p1", videos: ["v1"]), videos: [makeVideo("v1")]), .upserted(makePost("p2"), videos: []),
                       .skipped(skipped), .renamed("u1", handle: "ada.new", at: renamedAt), .position("100")]),
            progress: { progress in reported.withLock { $0 += progress.skipped } }))

        #expect(log.all == ["lock", "apply(no cursor)", "unlock"], "the video came with the batch: no lookup")
        #expect(await store.storedCursor == FeedCursor(position: "7"))
        #expect(await store.streamPosition == "100")
        #expect(await store.renamed.map(\.handle) == ["ada.new"])
        #expect(await Set(store.posts.keys) == ["p1", "p2"])
        #expect(await store.videos["v1"] != nil)
        #expect(report.pages == 1 && report.newPosts == 2 && report.skippedItems == 1)
        #expect(reported.withLock { $0 } == [skipped], "the skipped item goes to the caller's log, as a poll's does")
        #expect(await store.lockHolds == 0)
    }

    @Test func aVideoTheBatchDoesNotCarryIsAskedOfTheVideoHostAsForAPolledPage() async throws {
        let store = MockStore(log: log, cursor: FeedCursor(position: "7"))
        let videos = MockVideos(log: log, known: [makeVideo("v2")])

        let report = try #require(try await makeEngine(store: store, videos: videos).commit(
            LiveBatch([.upserted(makePost("p1", videos: ["v2"]), videos: [])])))

        #expect(log.all == ["lock", "videos(v2)", "apply(no cursor)", "unlock"])
        #expect(report.videosResolved == 1)
        #expect(await store.videos["v2"] != nil)
    }

    @Test func aFeedThatHasNeverSyncedTakesNoBatchItsFirstSyncReadsThePosts() async throws {
        let store = MockStore(log: log)

        let report = try await makeEngine(store: store).commit(LiveBatch([.upserted(makePost("p1"), videos: []), .position("5")]))

        #expect(report == nil)
        #expect(log.all == ["lock", "unlock"])
        #expect(await store.posts.isEmpty)
        #expect(await store.streamPosition == nil)
    }

    @Test func aFailedCommitKeepsNothingAndGivesTheLeaseBack() async throws {
        let store = MockStore(log: log, cursor: FeedCursor(position: "7"), failCommitNumber: 1)

        await #expect(throws: ServiceError.self) {
            try await makeEngine(store: store).commit(LiveBatch([.upserted(makePost("p1"), videos: []), .position("5")]))
        }

        #expect(log.all == ["lock", "apply(no cursor)", "unlock"])
        #expect(await store.posts.isEmpty)
        #expect(await store.streamPosition == nil)
        #expect(await store.lockHolds == 0)
    }

    @Test func anEmptyBatchTakesNoLease() async throws {
        let store = MockStore(log: log, cursor: FeedCursor(position: "7"))
        #expect(try await makeEngine(store: store).commit(LiveBatch([.connected])) == nil)
        #expect(log.all.isEmpty)
    }

    /// One process's SQLite lease is shared by its tasks: a poll and the stream commit pages of
    /// the same feed in turn. A batch that read the cursor after the poll's page 1 and commits
    /// after its page 2 must not put the cursor back to page 1.
    @Test func aPollAndAStreamedBatchInterleaveAndTheCursorNeverStepsBack() async throws {
        let gates = CommitGates()
        let store = MockStore(log: log, cursor: FeedCursor(position: "0"), beforeCommit: { await gates.pass($0) })
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1")], cursor: "1", hasMore: true)),
                                         .success(makePage([makePost("p2")], cursor: "2", hasMore: false))])
        let poller = makeEngine(store: store, posts: posts)
        let streamer = makeEngine(store: store)

        await gates.open(1)
        let poll = Task { try await poller.run() }
        await gates.arrived(2)                                        // page 1 is in (cursor 1), page 2 waits
        #expect(await store.storedCursor == FeedCursor(position: "1"))
        let stream = Task { try await streamer.commit(LiveBatch([.upserted(makePost("s1"), videos: []), .position("50")])) }
        await gates.arrived(3)                                        // the batch is committing
        await gates.open(2)
        let polled = try await poll.value                             // page 2 is in (cursor 2)
        #expect(await store.storedCursor == FeedCursor(position: "2"))
        await gates.open(3)
        let streamed = try #require(try await stream.value)

        #expect(await store.storedCursor == FeedCursor(position: "2"), "the batch left the poll's newer cursor")
        #expect(await store.streamPosition == "50")
        #expect(await Set(store.posts.keys) == ["p1", "p2", "s1"])
        #expect(polled.pages == 2 && streamed.pages == 1 && streamed.newPosts == 1)
        #expect(log.all.filter { $0.hasPrefix("apply") } == ["apply(1)", "apply(2)", "apply(no cursor)"], "each commit as the gates let it through")
    }
}
