import Core
import Foundation
import Testing
@testable import Sync

/// How many decoded pages a sync holds: the budget ``SyncEngine`` gives its pipeline, over pages
/// of several sizes, without a fetcher or a store.
@Suite struct PagePipelineTests {
    func makePipeline() -> PagePipeline<Int> {
        PagePipeline(least: SyncEngine.decodedPagesHeld, most: SyncEngine.decodedPagesHeldAtMost, budget: SyncEngine.decodedPagesBudget)
    }

    /// Reserves and hands over pages of `size` until a reservation would wait; how many were held.
    func pagesHeld(_ pipeline: PagePipeline<Int>, of size: PageSize) async throws -> Int {
        var held = 0
        while await !pipeline.isFull, held < 100 {
            try await pipeline.reserve()
            await pipeline.put(held, size: size)
            held += 1
        }
        return held
    }

    @Test func smallPagesAreHeldUpToTwelve() async throws {
        // A Mastodon page: 40 statuses, about 60 KB of text.
        #expect(try await pagesHeld(makePipeline(), of: PageSize(posts: 40, bytes: 60_000)) == 12)
    }

    @Test(arguments: [(200, 5), (300, 4), (400, 3), (1_000, 3), (10_000, 3)])
    func pagesPastTheFirstThreeAreHeldWhileThoseHeldHaveFewerThanAThousandPosts(posts: Int, held: Int) async throws {
        #expect(try await pagesHeld(makePipeline(), of: PageSize(posts: posts, bytes: posts * 1_000)) == held)
    }

    @Test func pagesOfLongPostsAreHeldThreeAtATime() async throws {
        // One post of 4 MiB a page: three pages are past the 8 MiB of text.
        #expect(try await pagesHeld(makePipeline(), of: PageSize(posts: 1, bytes: 4 << 20)) == 3)
        // Of 1 MiB: the first three and five more, to 8 MiB.
        #expect(try await pagesHeld(makePipeline(), of: PageSize(posts: 1, bytes: 1 << 20)) == 8)
    }

    @Test func committedPagesMakeRoomAndWaitingPagesAreTakenInOrderUpToTheLimit() async throws {
        let pipeline = makePipeline()
        let size = PageSize(posts: 500, bytes: 500_000)
        #expect(try await pagesHeld(pipeline, of: size) == 3)
        #expect(try await pipeline.take() == 0)
        #expect(await pipeline.takeWaiting(upTo: 1) == [1])
        #expect(await pipeline.takeWaiting(upTo: 5) == [2])
        #expect(await pipeline.takeWaiting(upTo: 5).isEmpty)
        await pipeline.committed([size, size])
        #expect(await !pipeline.isFull)
        #expect(try await pagesHeld(pipeline, of: size) == 2, "three held again, with the one not yet committed")
    }

    @Test func aPageIsAsLargeAsEveryLongStringItHolds() {
        let long = String(repeating: "x", count: 1 << 20)
        func size(_ post: Post) -> Int { makePage([post], cursor: "1", hasMore: true).approximateBytes }
        let plain = size(makePost("p1"))
        #expect(plain < 1_000)
        #expect(size(makePost("p1", text: long)) >= 1 << 20)
        var described = makePost("p1")
        described.attachments = [Post.Attachment(kind: "image", url: URL(string: "https://img.example/\(long)")!, description: long)]
        #expect(size(described) >= 2 << 20, "the attachment's URL and its alternative text")
        var named = makePost("p1")
        named.author = User(id: "u1", handle: "ada", displayName: long)
        named.labels = [long]
        #expect(size(named) >= 2 << 20, "the author's name and the labels")
        var page = makePage([makePost("p1")], cursor: "1", hasMore: true)
        page.videos = [Video(id: "v1", title: long, duration: 1, streamURL: URL(string: "https://v.example/1")!)]
        #expect(page.approximateBytes >= 1 << 20, "a video the page carries")
    }
}
