@testable import App
import Core
import Foundation
import Sync
import Testing

/// Which deliveries a committed page makes: per webhook, its feeds, events and rules; split by size.
@Suite struct WebhookAnnouncerTests {
    func post(_ id: String, reply: Bool = false) -> Post {
        var post = Post(id: PostID(id), author: User(id: "u1", handle: "ada", displayName: "Ada"), text: "hello \(id)",
                        createdAt: Date(timeIntervalSince1970: 1_700_000_000))
        if reply { post.replyTo = "p0" }
        return post
    }

    func target(_ url: String, events: Set<WebhookTarget.Event> = Set(WebhookTarget.Event.allCases), feeds: Set<String> = [],
                rules: [Rule] = []) throws -> WebhookTarget {
        WebhookTarget(url: URL(string: url)!, secret: Secret("secret-value-123"), events: events, feeds: feeds, rules: try PostRules(rules))
    }

    func bodies(_ queued: [WebhookDelivery]) throws -> [[String: Any]] {
        try queued.map { try JSONSerialization.jsonObject(with: Data($0.body.utf8)) as? [String: Any] ?? [:] }
    }

    @Test func eachWebhookIsToldTheEventsOfItsFeedsThatItsRulesLetThrough() async throws {
        let announcer = WebhookAnnouncer(targets: [
            try target("https://a.example/all"),
            try target("https://b.example/new-no-replies", events: [.new], rules: [Rule(.block, kinds: [.reply])]),
            try target("https://c.example/other-feed", feeds: ["other"]),
        ], now: { Date() })
        let page = FeedPage(changes: [.upsert(post("p1")), .upsert(post("p2", reply: true)), .upsert(post("p3")), .delete("p9")],
                            nextCursor: FeedCursor(position: "1"), hasMore: false)
        var result = PageWriteResult()
        (result.insertedIDs, result.updatedIDs, result.deletedIDs) = (["p1", "p2"], ["p3"], ["p9"])

        let queued = announcer.announcement(feed: "home", page: page, result: result).deliveries

        let sent = try bodies(queued)
        #expect(queued.map(\.endpoint) == ["https://a.example/all", "https://a.example/all", "https://a.example/all", "https://b.example/new-no-replies"])
        #expect(sent.map { $0["event"] as? String } == ["new", "updated", "deleted", "new"])
        #expect(sent.map { ($0["posts"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? [] } == [["p1", "p2"], ["p3"], [], ["p1"]])
        #expect(sent[2]["ids"] as? [String] == ["p9"] && sent.allSatisfy { $0["feed"] as? String == "home" })
        #expect(zip(queued, sent).allSatisfy { $0.id == $1["id"] as? String } && Set(queued.map(\.id)).count == 4, "a fresh id each")
    }

    @Test func aBigPageIsSplitIntoDeliveriesOfAtMostFiftyPosts() async throws {
        let posts = (0..<120).map { post("p\($0)") }
        var result = PageWriteResult()
        result.insertedIDs = posts.map(\.id)
        let queued = WebhookAnnouncer(targets: [try target("https://a.example/")], now: { Date() })
            .announcement(feed: "home", page: FeedPage(changes: posts.map(FeedChange.upsert), nextCursor: FeedCursor(position: "1"), hasMore: false),
                          result: result).deliveries
        #expect(try bodies(queued).map { ($0["posts"] as? [Any])?.count ?? 0 } == [50, 50, 20])
    }
}
