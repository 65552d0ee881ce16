import Foundation
import ProcessTestSupport
import Testing

/// The reading list across feeds (a reader app's `stream/contents`) is read in the listing's
/// order from an index of its own, newest first and oldest first, with no sort of the store's
/// posts: before migration 019 each page sorted every post (seconds at a million).
@Suite struct ListingIndexTests {
    @Test func theListingOrderIsReadFromItsIndexWithoutASort() async throws {
        try await withNewStoreFile("feedsync-listing") { path in
            let select = "EXPLAIN QUERY PLAN SELECT p.id FROM posts p LEFT JOIN post_state s ON s.feed = p.feed AND s.post_id = p.id"
                + " WHERE (0 = 0 OR s.read_at IS NULL)"
            for (order, bound) in [("p.created_at DESC, p.feed, p.id", ""), ("p.created_at, p.feed DESC, p.id DESC", ""),
                                   ("p.created_at DESC, p.feed, p.id", " AND p.created_at <= 5 AND (p.created_at < 5 OR p.feed > 'a')")] {
                let plan = try sqlite3(path, "\(select)\(bound) ORDER BY \(order) LIMIT 1000")
                #expect(plan.contains("posts_listing"), "\(order)\(bound): \(plan)")
                #expect(!plan.contains("TEMP B-TREE"), "\(order)\(bound): \(plan)")
            }
        }
    }
}
