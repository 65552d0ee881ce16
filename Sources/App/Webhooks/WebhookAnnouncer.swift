import Core
import Foundation
import Sync

/// Makes a webhook delivery for each event of each committed page that a webhook asks for; the
/// store queues them in the page's transaction (``Core/PageAnnouncer``).
///
/// A delivery's JSON body is one object, its members in this order:
///
///     {"id": "<delivery id>", "event": "new", "feed": "blog", "posts": [<post>, …]}
///     {"id": "<delivery id>", "event": "deleted", "feed": "blog", "ids": ["p1", …]}
///
/// each post in the shape `feedsync posts --json` prints. A page's posts are split into
/// deliveries of at most ``maxPostsPerDelivery`` posts and about ``maxBodyBytes`` bytes.
struct WebhookAnnouncer: PageAnnouncer {
    static let maxPostsPerDelivery = 50
    /// A body is closed once it passes this size (one post more at most).
    static let maxBodyBytes = 256 << 10
    /// Deleted ids a delivery lists at most.
    static let maxIDsPerDelivery = 1_000

    let targets: [WebhookTarget]
    let now: @Sendable () -> Date

    func announcement(feed: String, page: FeedPage, result: PageWriteResult) -> (deliveries: [WebhookDelivery], due: Date) {
        var posts: [PostID: Post] = [:]
        for case .upsert(let post) in page.changes { posts[post.id] = post }
        var deliveries: [WebhookDelivery] = []
        for target in targets where target.covers(feed) {
            for event in WebhookTarget.Event.allCases where target.events.contains(event) {
                switch event {
                case .deleted:
                    for chunk in stride(from: 0, to: result.deletedIDs.count, by: Self.maxIDsPerDelivery) {
                        let ids = result.deletedIDs[chunk ..< min(chunk + Self.maxIDsPerDelivery, result.deletedIDs.count)]
                        deliveries.append(delivery(to: target, event, feed) { json in
                            json.key("ids")
                            json.openArray()
                            for id in ids { json.string(id.rawValue) }
                            json.closeArray()
                        })
                    }
                case .new, .updated:
                    let ids = event == .new ? result.insertedIDs : result.updatedIDs
                    let told = ids.compactMap { posts[$0] }.filter { !target.rules.blocks($0) }
                    deliveries += batches(of: told, feed: feed).map { batch in
                        delivery(to: target, event, feed) { json in
                            json.key("posts")
                            json.openArray()
                            for bytes in batch { json.raw(bytes) }
                            json.closeArray()
                        }
                    }
                }
            }
        }
        return (deliveries, now())
    }

    /// Each post's JSON, grouped into deliveries by count and size.
    private func batches(of posts: [Post], feed: String) -> [[[UInt8]]] {
        var batches: [[[UInt8]]] = []
        var current: [[UInt8]] = []
        var bytes = 0
        for post in posts {
            var json = JSONWriter()
            PostRecord(StoredPost(feed: feed, post: post, isRead: false)).write(to: &json)
            current.append(json.bytes)
            bytes += json.bytes.count
            if current.count == Self.maxPostsPerDelivery || bytes >= Self.maxBodyBytes {
                batches.append(current)
                (current, bytes) = ([], 0)
            }
        }
        if !current.isEmpty { batches.append(current) }
        return batches
    }

    private func delivery(to target: WebhookTarget, _ event: WebhookTarget.Event, _ feed: String,
                          _ members: (inout JSONWriter) -> Void) -> WebhookDelivery {
        let id = UUID().uuidString.lowercased()
        var json = JSONWriter()
        json.openObject()
        json.string("id", id)
        json.string("event", event.rawValue)
        json.string("feed", feed)
        members(&json)
        json.closeObject()
        return WebhookDelivery(id: id, endpoint: target.url.absoluteString, body: json.text)
    }
}
