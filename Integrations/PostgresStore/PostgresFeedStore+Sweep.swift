import Core
import Foundation
import StoreKit

/// The sweep after a walk from the start, behind the feed's lease; the feed's backend is ``SQLStore``'s.
extension PostgresFeedStore: FeedSweeper {
    public func unseenPosts(of walk: FullWalk) throws -> (unseen: Int, cached: Int) {
        let row = try run("counting posts of feed \(walk.feed)", """
            SELECT COUNT(*), COUNT(*) FILTER (WHERE NOT (id = ANY($2::text[]))) FROM posts WHERE feed = $1
            """, [walk.feed, pgArray(walk.seen.map(\.rawValue))]).first
        return (Int(row?[1] ?? "0") ?? 0, Int(row?[0] ?? "0") ?? 0)
    }

    public func deleteUnseenPosts(of walk: FullWalk, under lease: FeedLease) throws -> Int {
        let operation = "finishing the full sync of feed \(walk.feed)"
        guard walk.feed == lease.feed else { throw Self.otherFeed(lease, operation) }
        let db = try db(operation)
        return try storage(operation) {
            try db.transaction {
                try checkLease(lease, operation, in: db)
                // What a sweep deletes is not fetched again: it waits for the disk, unlike a page.
                try db.execute("SET LOCAL synchronous_commit = on")
                return try db.query("DELETE FROM posts WHERE feed = $1 AND NOT (id = ANY($2::text[])) RETURNING 1",
                                    [walk.feed, pgArray(walk.seen.map(\.rawValue))]).count
            }
        }
    }
}

/// Retention and the webhook queue are ``SQLStore``'s (`prune(_:now:limit:under:)`, `enqueue(_:at:)`…).
extension PostgresFeedStore: PostPruner, WebhookQueue, MediaLedger {}

/// What `rules apply` reads and removes is ``SQLStore``'s (`ruleSubjects(ofFeed:after:limit:)`, `removePosts(_:under:)`).
extension PostgresFeedStore: PostRuleSweeper {}
