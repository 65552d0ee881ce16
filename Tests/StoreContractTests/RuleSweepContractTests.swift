import Core
import Foundation
import Testing

/// What `feedsync rules apply` reads and removes, the same on both stores: a feed's posts with
/// only what rules look at, a page at a time in stored order, and removal by id under the lease.
enum RuleSweepContract {
    static let ada = User(id: "u9", handle: "ada@example.social", displayName: "Ada", avatarURL: URL(string: "https://a.example/1.png"))
    static let bob = User(id: "u2", handle: "bob", displayName: "Bob")

    /// Seven posts of `home` (p0…p6; p2 a repost by Bob with a title, language, visibility and
    /// a video; p3 a reply with an attachment) and one of `other`.
    static func store(_ kind: StoreKind) async throws -> any FeedStore {
        let (store, _) = try await makeStores(kind)
        var posts = (0..<7).map { makePost("p\($0)", text: "text \($0) Café #Tag", at: 1_700_000_000 + Double($0)) }
        posts[2].author = ada
        posts[2].repost = Post.Repost(by: bob, originalID: "o2", at: Date(timeIntervalSince1970: 1_700_000_100))
        posts[2].title = "A title"
        posts[2].language = "de-AT"
        posts[2].visibility = .unlisted
        posts[2].videoIDs = ["v2"]
        posts[2].counts = Post.Counts(replies: 4, reposts: 5, likes: 6)
        posts[3].replyTo = "p1"
        posts[3].attachments = [Post.Attachment(kind: "image", url: URL(string: "https://m.example/p3.jpg")!)]
        _ = try await store.commit(makePage(posts.map(FeedChange.upsert), cursor: "7"))
        var other = makePost("p0", text: "of another feed")
        other.author = bob
        _ = try await store.commit(makePage([.upsert(other)], cursor: "1"), toFeed: "other")
        _ = try await store.setRead(true, postID: "p4", inFeed: "home")
        _ = try await store.setStarred(true, postID: "p5", inFeed: "home")
        return store
    }

    static func pagesReadOnlyWhatRulesLookAtInStoredOrder(_ kind: StoreKind) async throws {
        let store = try await store(kind)
        var pages: [[String]] = []
        var subjects: [Post] = []
        var after: Int64?
        repeat {
            let page = try await store.ruleSubjects(ofFeed: "home", after: after, limit: 3)
            pages.append(page.posts.map(\.id.rawValue))
            subjects += page.posts
            after = page.next
        } while after != nil && pages.count < 10
        #expect(pages == [["p0", "p1", "p2"], ["p3", "p4", "p5"], ["p6"]], "keyset pages in the order stored, the last short")
        let full = try await store.posts(matching: PostQuery(feed: "home", limit: 100)).map(\.post)
        for subject in subjects {
            let post = try #require(full.first { $0.id == subject.id })
            #expect(subject.text == post.text && subject.title == post.title && subject.language == post.language
                    && subject.visibility == post.visibility && subject.replyTo == post.replyTo && subject.videoIDs == post.videoIDs
                    && subject.attachments == post.attachments, "\(subject.id): what rules read is what a full read has")
            #expect(subject.author.id == post.author.id && subject.author.handle == post.author.handle)
            #expect(subject.repost?.by.id == post.repost?.by.id && subject.repost?.by.handle == post.repost?.by.handle
                    && subject.repost?.originalID == post.repost?.originalID)
        }
        #expect(subjects[2].repost?.by.handle == "bob" && subjects[2].author.handle == "ada@example.social" && subjects[3].replyTo == "p1")
        #expect(subjects[2].counts == Post.Counts(), "counts are not read")
        let exact = try await store.ruleSubjects(ofFeed: "home", after: nil, limit: 7)
        #expect(exact.posts.count == 7)
        if let next = exact.next { #expect(try await store.ruleSubjects(ofFeed: "home", after: next, limit: 7).posts.isEmpty) }
        #expect(try await store.ruleSubjects(ofFeed: "none", after: nil, limit: 3).posts.isEmpty)
    }

    static func removesTheGivenIdsOfTheLeasedFeedOnlyInBatches(_ kind: StoreKind) async throws {
        let store = try await store(kind)
        // More ids than one statement removes, with ids the feed does not hold.
        let ids = ["p1", "p4", "p6"].map { PostID($0) } + (0..<250).map { PostID("missing\($0)") }
        #expect(try await underLease(store) { try await store.removePosts(ids, under: $0) } == 3)
        #expect(try await underLease(store) { try await store.removePosts([], under: $0) } == 0)
        let left = try await store.posts(matching: PostQuery(feed: "home", limit: 100))
        #expect(left.map(\.post.id.rawValue).sorted() == ["p0", "p2", "p3", "p5"])
        #expect(left.first { $0.post.id == "p5" }?.isStarred == true, "marks of what stays are kept")
        #expect(try await store.posts(matching: PostQuery(feed: "other", limit: 100)).map(\.post.id.rawValue) == ["p0"],
                "another feed's post of the same id stays")
    }
}

@Suite struct SQLiteRuleSweepContractTests {
    @Test func pages() async throws { try await RuleSweepContract.pagesReadOnlyWhatRulesLookAtInStoredOrder(.sqlite) }
    @Test func removal() async throws { try await RuleSweepContract.removesTheGivenIdsOfTheLeasedFeedOnlyInBatches(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresRuleSweepContractTests {
    @Test func pages() async throws { try await RuleSweepContract.pagesReadOnlyWhatRulesLookAtInStoredOrder(.postgres) }
    @Test func removal() async throws { try await RuleSweepContract.removesTheGivenIdsOfTheLeasedFeedOnlyInBatches(.postgres) }
}
