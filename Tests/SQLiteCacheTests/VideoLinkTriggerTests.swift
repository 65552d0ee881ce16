import Foundation
import ProcessTestSupport
@testable import SQLiteCache
import Testing

/// A post is linked to its videos (`post_videos`) by the store's statement for a page's new
/// posts (migration 028) and by a trigger when its videos change, each finding a video by its
/// key: what a link costs does not grow with the number of videos its feed holds. Before
/// migration 027 SQLite read every video of the feed for each post that had one, half the time
/// of a Bluesky timeline's commit at 1,307 videos.
@Suite struct VideoLinkTriggerTests {
    /// The same post written and linked, then its video changed, in a feed of one video and in
    /// one of 3,000: SQLite's own count of the steps each statement took, and the links made.
    @Test func aVideoLinkCostsTheSameInAFeedOfOneVideoAsInAFeedOfThousands() async throws {
        try await withNewStoreFile("feedsync-video-links") { path in
            let filled = try runSQLite3(path, """
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 3000)
                INSERT INTO videos (feed, id) SELECT 'many', 'v' || x FROM n;
                INSERT INTO videos (feed, id) VALUES ('one', 'v1500'), ('one', 'v2999');
                """)
            #expect(filled.status == 0, "\(String(decoding: filled.printed, as: UTF8.self))")

            func steps(_ feed: String) throws -> [Int] {
                let run = try runSQLite3(path, commands: [
                    ".stats on",
                    "INSERT INTO posts (feed, id, author_id, text, created_at, video_ids) VALUES ('\(feed)', 'p1', 'u1', 'a clip', 1, '[\"v1500\"]');",
                    PageStatements.linkVideos(of: "p.pk = last_insert_rowid()").replacingOccurrences(of: "\n", with: " ") + ";",
                    ".stats off",
                    "SELECT 'linked ' || v.id FROM post_videos pv JOIN posts p ON p.pk = pv.post_pk JOIN videos v ON v.pk = pv.video_pk WHERE p.feed = '\(feed)';",
                    ".stats on",
                    "UPDATE posts SET video_ids = '[\"v2999\"]' WHERE feed = '\(feed)' AND id = 'p1';",
                ])
                let printed = String(decoding: run.printed, as: UTF8.self)
                #expect(run.status == 0, "\(printed)")
                #expect(printed.contains("linked v1500\n"), "the new post is linked to its video: \(printed)")
                return printed.split(separator: "\n").filter { $0.hasPrefix("Virtual Machine Steps:") }
                    .compactMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
            }
            let one = try steps("one"), many = try steps("many")
            #expect(one.count == 3 && many.count == 3, "one \(one), many \(many)")
            for (small, large) in zip(one, many) {
                #expect(large <= small + 50, "a link in a feed of 3,000 videos took \(large) steps, in a feed of one \(small)")
            }

            let links = try sqlite3(path, """
                SELECT p.feed || ' ' || v.id || ' ' || pv.position FROM post_videos pv
                JOIN posts p ON p.pk = pv.post_pk JOIN videos v ON v.pk = pv.video_pk ORDER BY p.feed
                """)
            #expect(links == "many v2999 0\none v2999 0\n")
        }
    }
}
