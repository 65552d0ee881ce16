import Core
import Foundation
import PostgresTestSupport
import Testing

/// What issue 23 added to the stores: a video's view count and rating, a podcast episode's
/// duration, number and season on its attachment, and the page a feed was discovered on. Each
/// check runs against both stores, through the one codec in StoreKit.
enum WebFeedFieldsContract {
    static func videoStatisticsAndEpisodeFieldsRoundTrip(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        let video = Video(id: "youtube:abc", title: "Part 2", duration: 185, streamURL: URL(string: "https://www.youtube.com/watch?v=abc")!,
                          thumbnailURL: URL(string: "https://i.ytimg.com/vi/abc/hq.jpg"), width: 640, height: 390,
                          viewCount: 56_789, rating: 4.75)
        var post = makePost("p1")
        post.videoIDs = [video.id]
        post.attachments = [Post.Attachment(kind: "audio", url: URL(string: "https://cdn.example.org/e4.m4a")!, mimeType: "audio/x-m4a",
                                            sizeBytes: 8_727_310, duration: 3723.5, episode: 4, season: 2)]
        try await underLease(store) { lease in _ = try await store.apply(makePage([.upsert(post)], cursor: "1"), videos: [video], under: lease) }
        let stored = try #require(try await store.posts(matching: PostQuery(feed: "home")).first)
        #expect(stored.videos == [video])
        #expect(stored.post.attachments == post.attachments)

        // A changed view count is a change of the video's row.
        var watched = video
        watched.viewCount = 60_000
        watched.rating = nil
        try await underLease(store) { lease in _ = try await store.apply(makePage([.upsert(post)], cursor: "2"), videos: [watched], under: lease) }
        #expect(try await store.posts(matching: PostQuery(feed: "home")).first?.videos == [watched])
    }

    static func aDiscoveredFeedKeepsThePageItWasFoundOn(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        func record(_ polling: PollingHint) async throws -> FeedStatus? {
            var report = SyncReport(feed: "home")
            report.polling = polling
            try await underLease(store) { lease in
                try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: report), under: lease)
            }
            return try await store.feedStatuses().first { $0.feed == "home" }
        }
        let discovered = try await record(PollingHint(location: "https://example.org/feed.xml", discoveredFrom: "https://example.org/"))
        #expect(discovered?.location == "https://example.org/feed.xml" && discovered?.discoveredFrom == "https://example.org/")
        let moved = try await record(PollingHint(location: "https://example.net/feed.xml"))
        #expect(moved?.location == "https://example.net/feed.xml" && moved?.discoveredFrom == nil, "a server's move is not a discovery")
    }
}

@Suite struct SQLiteWebFeedFieldsContractTests {
    @Test func videoStatisticsAndEpisodeFieldsRoundTrip() async throws { try await WebFeedFieldsContract.videoStatisticsAndEpisodeFieldsRoundTrip(.sqlite) }
    @Test func aDiscoveredFeedKeepsThePageItWasFoundOn() async throws { try await WebFeedFieldsContract.aDiscoveredFeedKeepsThePageItWasFoundOn(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresWebFeedFieldsContractTests {
    @Test func videoStatisticsAndEpisodeFieldsRoundTrip() async throws { try await WebFeedFieldsContract.videoStatisticsAndEpisodeFieldsRoundTrip(.postgres) }
    @Test func aDiscoveredFeedKeepsThePageItWasFoundOn() async throws { try await WebFeedFieldsContract.aDiscoveredFeedKeepsThePageItWasFoundOn(.postgres) }
}
