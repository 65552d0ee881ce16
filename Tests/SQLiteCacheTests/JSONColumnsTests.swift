import Core
import Foundation
import ProcessTestSupport
import SQLiteCache
import Testing

/// The JSON columns as earlier versions of this store wrote them (`\u00XX` for every control
/// character in `video_ids` and `labels`): such a row reads back the same, and is rewritten once
/// in the form both stores write now when a page next carries its post.
@Suite struct JSONColumnsTests {
    @Test func aRowInTheEarlierFormReadsBackTheSameAndIsRewrittenOnce() async throws {
        try await withScratchFolder("feedsync-json") { folder in
            let path = folder.appendingPathComponent("cache.sqlite").path
            let store = SQLiteFeedStore(path: path)
            try await store.open()
            var post = Post(id: "p1", author: User(id: "u1", handle: "ada", displayName: "Ada"), text: "hello",
                            createdAt: Date(timeIntervalSince1970: 1_700_000_000))
            post.videoIDs = [VideoID("v\t1")]
            post.labels = ["a\nb", "c\u{1}d"]
            let page = FeedPage(changes: [.upsert(post)], nextCursor: FeedCursor(position: "1"), hasMore: false)
            _ = try await store.apply(page, videos: [], under: testLease("home"))
            let now = #"["v\t1"]|["a\nb","c\u0001d"]"#
            #expect(try sqlite3(path, "SELECT video_ids, labels FROM posts").trimmingCharacters(in: .newlines) == now)

            _ = try sqlite3(path, #"UPDATE posts SET video_ids = '["v\u00091"]', labels = '["a\u000ab","c\u0001d"]'"#)
            let read = try #require(try await store.posts(matching: PostQuery(feed: "home")).first?.post)
            #expect(read.videoIDs == post.videoIDs && read.labels == post.labels, "the earlier form reads the same")

            #expect(try await store.apply(page, videos: [], under: testLease("home")).updated == 1)
            #expect(try sqlite3(path, "SELECT video_ids, labels FROM posts").trimmingCharacters(in: .newlines) == now)
            #expect(try await store.apply(page, videos: [], under: testLease("home")).unchanged == 1, "then left alone")
            await store.close()
        }
    }
}
