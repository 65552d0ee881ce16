import Core
import Foundation
import ProcessTestSupport
import SQLiteCache
import Testing

/// Pages committed together complete their new posts once for the transaction (`NewPosts`):
/// whatever the later pages do to those posts first (rewrite them, delete them, rename or
/// re-profile or rename their authors, repost them), the store ends as one page at a time leaves it, and
/// the search index stays whole.
@Suite struct NewPostsGroupTests {
    static let words = ["apricot", "bramble", "quince", "damson", "medlar", "sloe"]

    /// Seeded random pages of one feed: new posts, rewrites, deletions and reposts, by a few
    /// authors whose handles and names change from page to page, some posts with videos.
    static func pages(seed: UInt64, count: Int) -> [FeedPage] {
        var random = SeededRandom(seed: seed)
        var pages: [FeedPage] = []
        var nextPost = 0
        for index in 0 ..< count {
            var changes: [FeedChange] = []
            for _ in 0 ..< 1 + random.next(below: 6) {
                let roll = random.next(below: 10)
                if roll < 2, nextPost > 0 {
                    changes.append(.delete(PostID("p\(random.next(below: nextPost))")))
                    continue
                }
                // A new post, or (one in three) one already written, again with other text.
                let id = roll < 5 && nextPost > 0 ? random.next(below: nextPost) : { nextPost += 1; return nextPost - 1 }()
                let author = random.next(below: 4)
                // A profile as of the page: later pages may rename their authors.
                let user = User(id: UserID("u\(author)"), handle: "h\(author)-\(random.next(below: 3))",
                                displayName: "\(words[random.next(below: words.count)]) \(author)")
                let text = (0 ..< 2).map { _ in words[random.next(below: words.count)] }.joined(separator: " ")
                var post = Post(id: PostID("p\(id)"), author: user, text: text,
                                createdAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(index * 100 + random.next(below: 100))),
                                videoIDs: random.next(below: 4) == 0 ? [VideoID("v\(random.next(below: 5))")] : [])
                if random.next(below: 5) == 0 {
                    let by = random.next(below: 4)
                    post.repost = Post.Repost(by: User(id: UserID("u\(by)"), handle: "h\(by)-\(random.next(below: 3))", displayName: "sharer \(by)"),
                                              originalID: PostID("o\(id)"))
                }
                changes.append(.upsert(post))
            }
            // Now and then an author renamed, as a live stream reports it.
            let renames = random.next(below: 6) == 0
                ? [AuthorRename(author: UserID("u\(random.next(below: 4))"), handle: "renamed\(index)",
                                at: Date(timeIntervalSince1970: 1_700_000_000 + Double(index * 100 + 99)))]
                : []
            pages.append(FeedPage(changes: changes, nextCursor: FeedCursor(position: "\(index)"), hasMore: true, renames: renames))
        }
        return pages
    }

    /// What a reader sees of the store: every post with its author's names and videos, each
    /// word's search hits, the links, the feed's counter, and the search index's own check.
    static func contents(_ path: String) throws -> String {
        var parts = [try sqlite3(path, """
            SELECT id, author_handle, author_name, text, video_ids, repost_by FROM posts ORDER BY pk;
            SELECT p.id, l.position, v.id FROM post_videos l JOIN posts p ON p.pk = l.post_pk JOIN videos v ON v.pk = l.video_pk ORDER BY p.pk, l.position;
            SELECT id, handle, display_name FROM users ORDER BY id;
            SELECT feed, version FROM feed_versions;
            INSERT INTO posts_fts(posts_fts, rank) VALUES('integrity-check', 1); SELECT 'index whole';
            """)]
        for word in words + ["h0", "h1", "h2", "h3", "renamed"] {
            parts.append(word + ": " + (try sqlite3(path, """
                SELECT group_concat(id, ' ') FROM (SELECT p.id FROM posts_fts JOIN posts p ON p.pk = posts_fts.rowid
                WHERE posts_fts MATCH '\(word)*' ORDER BY p.pk)
                """)))
        }
        return parts.joined(separator: "\n")
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func pagesCommittedTogetherEndAsOnePageAtATime(seed: UInt64) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-new-posts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pages = Self.pages(seed: seed, count: 40)
        let videos = (0 ..< 5).map { Video(id: VideoID("v\($0)"), title: "clip \($0)", duration: 1, streamURL: URL(string: "https://x.example/\($0)")!) }

        let alone = SQLiteFeedStore(path: folder.appendingPathComponent("alone.sqlite").path)
        try await alone.open()
        for page in pages {
            _ = try await alone.apply(page, videos: videos.filter { page.referencedVideoIDs.contains($0.id) }, under: testLease("home"))
        }

        let grouped = SQLiteFeedStore(path: folder.appendingPathComponent("grouped.sqlite").path)
        try await grouped.open()
        var random = SeededRandom(seed: seed &+ 100)
        var start = 0
        var groups = 0
        while start < pages.count {
            let end = min(pages.count, start + 1 + random.next(below: 8))
            let group = pages[start ..< end].map { page in
                (page: grouped.prepare(page), videos: videos.filter { page.referencedVideoIDs.contains($0.id) })
            }
            _ = try await grouped.apply(group, under: testLease("home"), announcing: nil)
            start = end
            groups += 1
        }
        await alone.close()
        await grouped.close()

        #expect(groups < pages.count, "some pages were committed together")
        let expected = try Self.contents(folder.appendingPathComponent("alone.sqlite").path)
        #expect(expected.contains("index whole"))
        #expect(try Self.contents(folder.appendingPathComponent("grouped.sqlite").path) == expected)
    }
}
