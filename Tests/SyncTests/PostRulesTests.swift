import Core
import Foundation
import Sync
import Testing

/// The rules: each criterion, the order they are asked in, and where a sync applies them — on
/// polled pages and streamed batches alike, with a blocked post counted as seen by a full walk.
@Suite struct PostRulesTests {
    let log = CallLog()

    func post(_ id: String, text: String = "hello", handle: String = "ada", language: String? = nil, visibility: Post.Visibility? = nil,
              reply: Bool = false, repost: Bool = false, media: Bool = false, title: String? = nil) -> Post {
        var post = makePost(id, text: text, videos: media ? ["v-\(id)"] : [])
        post.author = User(id: UserID("id-\(handle)"), handle: handle, displayName: handle)
        post.language = language
        post.visibility = visibility
        post.title = title
        if reply { post.replyTo = "p0" }
        if repost { post.repost = Post.Repost(by: User(id: "id-bob", handle: "bob@example.social", displayName: "Bob"), originalID: "o1") }
        return post
    }

    @Test func eachCriterionMatchesWhatItNames() throws {
        func blocks(_ rule: Rule, _ post: Post) throws -> Bool { try PostRules([rule]).blocks(post) }
        #expect(try blocks(Rule(.block, text: .words(["crypto"])), post("a", text: "All about Crypto, today")))
        #expect(try !blocks(Rule(.block, text: .words(["crypto"])), post("a", text: "cryptography")), "whole words only")
        #expect(try blocks(Rule(.block, text: .words(["hot take"])), post("a", text: "my HOT   take is")))
        #expect(try blocks(Rule(.block, text: .regex("bit(coin)?s?$")), post("a", text: "buy BITCOIN")))
        #expect(try !blocks(Rule(.block, text: .regex("^bit")), post("a", text: "a bit")))
        #expect(try blocks(Rule(.block, title: .words(["sponsored"])), post("a", title: "Sponsored: a thing")))
        #expect(try !blocks(Rule(.block, title: .words(["sponsored"])), post("a", text: "sponsored")), "a title rule reads the title")
        #expect(try blocks(Rule(.block, authors: ["@Spam@example.social"]), post("a", handle: "spam@example.social")))
        #expect(try blocks(Rule(.block, authors: ["id-spam"]), post("a", handle: "spam")))
        #expect(try blocks(Rule(.block, authors: ["bob@example.social"]), post("a", repost: true)), "who reposted it")
        #expect(try blocks(Rule(.block, tags: ["nsfw"]), post("a", text: "look #NSFW here")))
        #expect(try !blocks(Rule(.block, tags: ["nsfw"]), post("a", text: "a&#nsfw; nsfw")))
        #expect(try blocks(Rule(.block, languages: ["de"]), post("a", language: "de-AT")))
        #expect(try !blocks(Rule(.block, languages: ["de"]), post("a", language: nil)))
        #expect(try blocks(Rule(.block, visibilities: [.unlisted]), post("a", visibility: .unlisted)))
        #expect(try blocks(Rule(.block, kinds: [.reply]), post("a", reply: true)))
        #expect(try !blocks(Rule(.block, kinds: [.reply]), post("a")))
        #expect(try blocks(Rule(.block, kinds: [.repost], media: false), post("a", repost: true)))
        #expect(try !blocks(Rule(.block, kinds: [.repost], media: false), post("a", repost: true, media: true)), "every criterion must match")
        #expect(try blocks(Rule(.block, kinds: [.post, .reply]), post("a")), "any value of a list")
    }

    @Test func theFirstRuleThatMatchesDecidesAndAPostNoneMatchesIsKept() throws {
        let rules = try PostRules([Rule(.keep, authors: ["friend"]), Rule(.block, text: .words(["crypto"])), Rule(.block, kinds: [.repost])])
        #expect(!rules.blocks(post("a", text: "crypto", handle: "friend")))
        #expect(rules.blocks(post("b", text: "crypto")))
        #expect(rules.blocks(post("c", repost: true)))
        #expect(!rules.blocks(post("d")))
        #expect(rules.blockingEverything == nil)
        let only = try PostRules([Rule(.keep, tags: ["swift"]), Rule(.block, keyPath: "rules[1]")])
        #expect(!only.blocks(post("e", text: "#swift")) && only.blocks(post("f")))
        #expect(only.blockingEverything == nil, "a keep rule comes first")
        #expect(try PostRules([Rule(.block, text: .words(["x"])), Rule(.block, keyPath: "rules[1]")]).blockingEverything?.keyPath == "rules[1]")
    }

    @Test func aRegularExpressionThatDoesNotCompileIsNamedByItsKeyPath() {
        for pattern in ["(unclosed", "a{2,1}", #"(a)\1"#, ""] {
            #expect(throws: PostRules.CompileError.self, "\(pattern)") { try PostRules([Rule(.block, text: .regex(pattern), keyPath: "feeds[0].rules[3]")]) }
        }
        do {
            _ = try PostRules([Rule(.keep), Rule(.block, title: .regex("[z-a]"), keyPath: "rules[1]")])
            Issue.record("compiled")
        } catch let error as PostRules.CompileError {
            #expect(error.keyPath == "rules[1].block.title" && error.reason.hasPrefix("the regular expression does not compile"), "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func aPolledPageIsStoredWithoutItsBlockedPostsWhichAFullWalkCountsAsSeen() async throws {
        let store = MockStore(log: log)
        _ = try await store.apply(makePage([makePost("p1"), makePost("p2"), makePost("p3")], cursor: "0", hasMore: false),
                                  videos: [], under: FeedLease(feed: "home", token: "test"))
        // A rule added since: p1 and p2 are now blocked; a full walk that sees only p3 stored
        // must not take them (nor the new p4) for deletions.
        let posts = MockPosts(log: log, [.success(makePage([makePost("p1", text: "spam"), makePost("p2", text: "spam"), makePost("p3"),
                                                            makePost("p4", text: "spam")], cursor: "4", hasMore: false))])
        var options = SyncEngine.Options()
        options.rules = try PostRules([Rule(.block, text: .words(["spam"]))])
        options.maxDeletionRatio = 0
        let services = SyncEngine.Services(authentication: MockAuthentication(log: log), posts: posts, videos: MockVideos(log: log),
                                           store: store, requests: RequestCounter())

        let report = try await SyncEngine(feed: "home", services: services, options: options, sleep: { _ in }).run(full: true)

        #expect(report.filteredPosts == 3 && report.newPosts == 0 && report.deletedPosts == 0)
        #expect(await store.posts.keys.sorted() == ["p1", "p2", "p3"], "blocked posts are not written, and not deleted as gone")
    }

    @Test func aStreamedBatchIsStoredWithoutItsBlockedPosts() async throws {
        let store = MockStore(log: log, cursor: FeedCursor(position: "7"))
        var options = SyncEngine.Options()
        options.rules = try PostRules([Rule(.block, kinds: [.reply])])
        let services = SyncEngine.Services(authentication: nil, posts: MockPosts(log: log, []), videos: MockVideos(log: log),
                                           store: store, requests: RequestCounter())
        let engine = SyncEngine(feed: "home", services: services, options: options, sleep: { _ in })

        let report = try #require(try await engine.commit(LiveBatch([.upserted(post("s1"), videos: []), .upserted(post("s2", reply: true), videos: [])])))

        #expect(report.newPosts == 1 && report.filteredPosts == 1)
        #expect(await Set(store.posts.keys) == ["s1"])
    }

    /// An all-ASCII text is split byte by byte, any other by character: the same words either way.
    @Test func asciiAndOtherTextsSplitIntoTheSameWords() throws {
        func blocks(_ rule: Rule, _ post: Post) throws -> Bool { try PostRules([rule]).blocks(post) }
        let phrase = Rule(.block, text: .words(["hot take", "c3po_x"]))
        #expect(try blocks(phrase, post("a", text: "A HOT\r\ntake!")))
        #expect(try blocks(phrase, post("b", text: "(C3PO_X)")))
        #expect(try !blocks(phrase, post("c", text: "c3po x, hot-takes")))
        let accented = Rule(.block, text: .words(["café", "naïve"]))
        #expect(try blocks(accented, post("d", text: "Über CAFÉ")))
        #expect(try !blocks(accented, post("e", text: "cafés naïvety")))
    }
}
