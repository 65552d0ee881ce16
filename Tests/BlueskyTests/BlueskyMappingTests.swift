@testable import Bluesky
import Core
import Foundation
import IntegrationKit
import Testing

/// Mapping AppView answers (shaped by the lexicons in app.bsky.feed.defs and app.bsky.embed.*)
/// into Core: every embed type, reposts, replies, quotes, facets over multi-byte text, labels,
/// missing optional fields, and items that must be skipped with a reason.
@Suite struct BlueskyMappingTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/bluesky/views/timeline.json")
    static let alice = "did:plc:alice0000000000000000001"
    static let bob = "did:plc:bob00000000000000000000002"

    func makePage() throws -> (posts: [String: Post], read: BlueskyPostService.Read) {
        let page = try BlueskyFeedResponse(body: Data(contentsOf: Self.fixture), barePosts: false)
        let read = BlueskyPostService.read(page)
        return (Dictionary(read.entries.map { ($0.post.id.rawValue, $0.post) }, uniquingKeysWith: { first, _ in first }), read)
    }

    func post(_ key: String) throws -> Post {
        let posts = try makePage().posts
        return try #require(posts.first { $0.key.hasSuffix(key) }?.value, "no post \(key) in \(posts.keys.sorted())")
    }

    /// A page of one item, with `post` fields spliced into a valid post view.
    func mapOne(_ extra: String, record: String = "", reason: String = "") throws -> BlueskyFeedResponse.Entry {
        let json = """
            {"feed": [{"post": {"uri": "at://\(Self.bob)/app.bsky.feed.post/3kx", "cid": "bafy", "indexedAt": "2026-02-01T00:00:00Z",
              "author": {"did": "\(Self.bob)", "handle": "bob.example.com"},
              "record": {"text": "hi", "createdAt": "2026-02-01T00:00:00Z"\(record)}\(extra)}\(reason)}]}
            """
        let page = try BlueskyFeedResponse(body: Data(json.utf8), barePosts: false)
        return try #require(page.entries.first)
    }

    func skipReason(_ extra: String, record: String = "", reason: String = "") throws -> String? {
        switch try mapOne(extra, record: record, reason: reason) {
        case .unreadable(_, _, let reason): return reason
        case .item(let item):
            do { _ = try Post(item); _ = try item.post.embed?.video(); return nil } catch let error as ServiceError { return error.reason }
        }
    }

    /// A page's authors are looked up by their whole profile (hashed by DID alone): one DID under
    /// two handles, or with and without a name, gives each post its own author.
    @Test func oneDIDUnderTwoProfilesOnAPageKeepsEachPostsOwnAuthor() throws {
        func item(_ key: String, _ author: String) -> String {
            """
            {"post": {"uri": "at://\(Self.bob)/app.bsky.feed.post/\(key)", "cid": "bafy\(key)", "indexedAt": "2026-02-01T00:00:00Z",
              "author": \(author), "record": {"text": "hi", "createdAt": "2026-02-01T00:00:00Z"}}}
            """
        }
        let json = """
            {"feed": [\(item("3ka", #"{"did": "\#(Self.bob)", "handle": "bob.example.com"}"#)),
                      \(item("3kb", #"{"did": "\#(Self.bob)", "handle": "bob.example.org", "displayName": "Bob"}"#)),
                      \(item("3kc", #"{"did": "\#(Self.bob)", "handle": "bob.example.com"}"#))]}
            """
        let read = BlueskyPostService.read(try BlueskyFeedResponse(body: Data(json.utf8), barePosts: false))
        let authors = read.entries.map { "\($0.post.author.handle) \($0.post.author.displayName)" }
        #expect(authors == ["bob.example.com bob.example.com", "bob.example.org Bob", "bob.example.com bob.example.com"])
        #expect(Set(read.entries.map(\.post.author.id)) == [UserID(Self.bob)])
    }

    @Test func aPostWithImagesFacetsLabelsAndAReplyMapsEveryField() throws {
        let post = try post("3kfull0000001")
        #expect(post.id.rawValue == "at://\(Self.alice)/app.bsky.feed.post/3kfull0000001")
        #expect(post.author == User(id: UserID(Self.alice), handle: "alice.bsky.social", displayName: "Alice 🌷",
                                    avatarURL: URL(string: "https://cdn.bsky.app/img/avatar/plain/did:plc:alice0000000000000000001/bafkavatar@jpeg")))
        #expect(post.text.hasPrefix("👩🏽‍💻 café\u{301} see example.com/x"))
        #expect(post.replyTo?.rawValue == "at://\(Self.bob)/app.bsky.feed.post/3kparent00001", "the record's parent, not the blocked view")
        #expect(post.counts == Post.Counts(replies: 3, reposts: 5, likes: 42, quotes: 1))
        #expect(post.language == "en" && post.visibility == .public)
        #expect(post.labels == ["nudity", "graphic-media"], "a negated label is dropped, self-labels are kept")
        #expect(post.url?.absoluteString == "https://bsky.app/profile/\(Self.alice)/post/3kfull0000001")
        #expect(post.createdAt == Date(timeIntervalSince1970: 1_769_940_000))
        #expect(post.attachments.count == 2)
        #expect(post.attachments[0] == Post.Attachment(kind: "image", url: URL(string: "https://cdn.bsky.app/img/feed_fullsize/plain/x/bafyimg1@jpeg")!,
                                                       previewURL: URL(string: "https://cdn.bsky.app/img/feed_thumbnail/plain/x/bafyimg1@jpeg"),
                                                       description: "a cat", width: 4, height: 3))
        #expect(post.attachments[1].description == nil && post.attachments[1].width == nil, "empty alt and no aspect ratio")
    }

    @Test func facetsCountUTF8BytesPastEmojiAndCombiningCharacters() throws {
        let html = try #require(try post("3kfull0000001").html)
        #expect(html == "<p>👩🏽‍💻 café\u{301} see <a href=\"https://example.com/x?a=1&amp;b=2\">example.com/x</a> and "
                + "<a href=\"https://bsky.app/profile/\(Self.bob)\">@bob.example.com</a> "
                + "<a href=\"https://bsky.app/hashtag/swift\">#swift</a><br>bye</p>")
    }

    @Test func badFacetsLeaveTheirTextPlain() {
        let text = "é <b> x"   // é is two bytes
        let facets = [BlueskyFacet(byteStart: 1, byteEnd: 3, features: [.link(uri: "https://a.example")]),     // splits é
                      BlueskyFacet(byteStart: 3, byteEnd: 99, features: [.link(uri: "https://b.example")]),    // past the end
                      BlueskyFacet(byteStart: 8, byteEnd: 9, features: [.link(uri: "javascript:alert(1)")]),   // not a web URL
                      BlueskyFacet(byteStart: 3, byteEnd: 6, features: [.mention(did: "not a did")])]
        #expect(BlueskyRichText.html(text, facets: facets) == "<p>é &lt;b&gt; x</p>")
        let overlapping = [BlueskyFacet(byteStart: 0, byteEnd: 5, features: [.tag("a")]), BlueskyFacet(byteStart: 3, byteEnd: 9, features: [.tag("b")])]
        #expect(BlueskyRichText.html(text, facets: overlapping) == "<p><a href=\"https://bsky.app/hashtag/a\">é &lt;b</a>&gt; x</p>")
    }

    @Test func textIsEscapedByteForByteAroundEveryEscape() {
        // Each escaped byte at the start, the end, alone, doubled and between other text, with
        // and without a link around it: runs are copied whole, so their edges are what can break.
        let special = ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;", "\n": "<br>"]
        for (byte, escaped) in special {
            for (text, expected) in [(byte, escaped), (byte + byte, escaped + escaped), ("a" + byte, "a" + escaped),
                                     (byte + "é", escaped + "é"), ("x" + byte + "y" + byte + "z", "x" + escaped + "y" + escaped + "z")] {
                #expect(BlueskyRichText.html(text, facets: []) == "<p>\(expected)</p>", "\(text.debugDescription)")
                let link = BlueskyFacet(byteStart: 0, byteEnd: text.utf8.count, features: [.tag("t")])
                #expect(BlueskyRichText.html(text, facets: [link]) == "<p><a href=\"https://bsky.app/hashtag/t\">\(expected)</a></p>")
            }
        }
        // A link's address is escaped too; Foundation has already made its quote `%22`.
        let facet = BlueskyFacet(byteStart: 0, byteEnd: 1, features: [.link(uri: "https://a.example/?q='\"")])
        #expect(BlueskyRichText.html("x", facets: [facet]) == "<p><a href=\"https://a.example/?q=&#39;%22\">x</a></p>")
    }

    @Test func anASCIITagIsEscapedAsFoundationEscapesIt() {
        // Every ASCII byte, alone and between letters: the byte-wise path must give Foundation's
        // `.alphanumerics` escaping, and refuse whitespace as the Character check did.
        for byte in UInt8(0)...0x7F {
            let character = String(decoding: [byte], as: UTF8.self)
            for tag in [character, "a\(character)b"] {
                let foundation = tag.contains(where: \.isWhitespace) ? nil
                    : tag.addingPercentEncoding(withAllowedCharacters: .alphanumerics).map { "https://bsky.app/hashtag/\($0)" }
                #expect(BlueskyRichText.asciiTagURL(tag) == foundation, "byte \(byte)")
                #expect(BlueskyRichText.href(.tag(tag)) == foundation, "byte \(byte)")
            }
        }

    }

    @Test func aMalformedFacetCostsOnlyTheFacetNotThePost() throws {
        let link = #"{"$type": "app.bsky.richtext.facet#link", "uri": "https://a.example"}"#
        let bad = [#"{"byteStart": 0, "byteEnd": 18446744073709551616}"#, #"{"byteStart": 2, "byteEnd": 1}"#, #"{"byteStart": 0, "byteEnd": 99}"#,
                   #"{"byteStart": -1, "byteEnd": 1}"#, #"{"byteStart": 0.5, "byteEnd": 1}"#, #"{"byteStart": 0}"#, #""0-2""#, "null"]
        for index in bad {
            let facets = #", "facets": [{"index": \#(index), "features": [\#(link)]}, {"index": {"byteStart": 0, "byteEnd": 2}, "features": [\#(link)]}]"#
            let entry = try mapOne("", record: facets)
            guard case .item(let item) = entry else { Issue.record("the post was skipped for \(index)"); continue }
            #expect(try Post(item).html == "<p><a href=\"https://a.example\">hi</a></p>", "\(index)")
        }
        let notAFacet = try mapOne("", record: #", "facets": [7, {"index": {"byteStart": 0, "byteEnd": 2}, "features": [\#(link)]}]"#)
        guard case .item(let item) = notAFacet else { Issue.record("skipped"); return }
        #expect(try Post(item).html == "<p><a href=\"https://a.example\">hi</a></p>")
    }

    @Test func aVideoBecomesACoreVideoWithPlaylistThumbnailAltAndAspectRatio() throws {
        let (posts, read) = try makePage()
        let post = try #require(posts["at://\(Self.bob)/app.bsky.feed.post/3kvideo000001"])
        #expect(post.videoIDs == ["bafkvideocid1"])
        let video = try #require(read.entries.first { $0.post.id == post.id }?.video)
        #expect(video == Video(id: "bafkvideocid1", title: "waves", duration: 0,
                               streamURL: URL(string: "https://video.bsky.app/watch/did%3Aplc%3Abob/bafkvideocid1/playlist.m3u8")!,
                               thumbnailURL: URL(string: "https://video.bsky.app/watch/did%3Aplc%3Abob/bafkvideocid1/thumbnail.jpg"),
                               width: 16, height: 9))
        #expect(post.counts == Post.Counts(), "zero counts stay zero")
    }

    @Test func anExternalLinkBecomesALinkCardAttachment() throws {
        let post = try post("3kexternal001")
        #expect(post.attachments == [Post.Attachment(kind: "link", url: URL(string: "https://www.swift.org/blog/")!,
                                                     previewURL: URL(string: "https://cdn.bsky.app/img/feed_thumbnail/plain/y/bafythumb@jpeg"),
                                                     description: "News", title: "Swift.org Blog")])
        #expect(post.text == "" && post.html == nil)
        #expect(post.author.displayName == "carl.example.org", "an empty display name falls back to the handle")
    }

    @Test func quotesKeepTheQuotedURIWithOrWithoutMedia() throws {
        let quoted = PostID("at://\(Self.bob)/app.bsky.feed.post/3kquoted00001")
        #expect(try post("3kquote000001").quoteOf == quoted)
        let withMedia = try post("3kquotemed001")
        #expect(withMedia.quoteOf == quoted, "a quote of a post not found still names it")
        #expect(withMedia.attachments.map(\.description) == ["chart"])
        #expect(try post("3kfeedembed01").quoteOf == nil, "an embedded feed generator is not a quoted post")
    }

    @Test func aRepostIsAnEntryOfItsOwnBesideTheOriginal() throws {
        let posts = try makePage().posts
        let repost = try #require(posts["at://\(Self.alice)/app.bsky.feed.repost/3krepost00001"])
        let original = try #require(posts["at://\(Self.bob)/app.bsky.feed.post/3kold00000001"])
        #expect(repost.repost == Post.Repost(by: repost.repost!.by, originalID: original.id,
                                            at: Date(timeIntervalSince1970: 1_769_943_600)))
        #expect(repost.repost?.by.id.rawValue == Self.alice)
        #expect(repost.author == original.author && repost.text == original.text && repost.createdAt == original.createdAt)
        #expect(original.repost == nil)
    }

    @Test func aRepostWithoutItsRecordURIGetsAStableID() throws {
        let entry = try mapOne("", reason: #", "reason": {"$type": "app.bsky.feed.defs#reasonRepost", "indexedAt": "2026-03-01T00:00:00Z", "by": {"did": "did:plc:carol", "handle": "carol.test"}}"#)
        guard case .item(let item) = entry else { Issue.record("unreadable"); return }
        #expect(try Post(item).id.rawValue == "at://\(Self.bob)/app.bsky.feed.post/3kx#repost-by-did:plc:carol")
    }

    /// An item the reader refuses still names the id it is stored under, so a walk from the start keeps its stored copy.
    @Test func anUnreadableItemCarriesTheIDItIsStoredUnder() throws {
        let post = "at://\(Self.bob)/app.bsky.feed.post/3kx"
        let repostURI = "at://did:plc:carol/app.bsky.feed.repost/3kr"
        func listed(_ extra: String, reason: String = "") throws -> PostID?? {
            guard case .unreadable(_, let postID, _) = try mapOne(extra, reason: reason) else { return .none }
            return .some(postID)
        }
        let unreadable = #", "likeCount": "many""#
        #expect(try listed(unreadable) == .some(PostID(post)))
        #expect(try listed(unreadable, reason: #", "reason": {"$type": "app.bsky.feed.defs#reasonRepost", "uri": "\#(repostURI)", "by": {"did": "did:plc:carol"}}"#)
                == .some(PostID(repostURI)))
        #expect(try listed(unreadable, reason: #", "reason": {"by": {"did": "did:plc:carol"}, "$type": "app.bsky.feed.defs#reasonRepost"}"#)
                == .some(PostID("\(post)#repost-by-did:plc:carol")))
        // A repost whose reposter cannot be read does not say its id.
        #expect(try listed(unreadable, reason: #", "reason": {"$type": "app.bsky.feed.defs#reasonRepost", "by": 5}"#) == .some(nil))
        #expect(try listed(unreadable, reason: #", "reason": {"$type": 7}"#) == .some(nil))
        // The same id as the item would have had, read whole.
        let whole = try mapOne("", reason: #", "reason": {"$type": "app.bsky.feed.defs#reasonRepost", "uri": "\#(repostURI)", "indexedAt": "2026-03-01T00:00:00Z", "by": {"did": "did:plc:carol", "handle": "carol.test"}}"#)
        guard case .item(let item) = whole else { Issue.record("unreadable"); return }
        #expect(try Post(item).id.rawValue == repostURI)
    }

    @Test func missingOptionalFieldsMapToNothing() throws {
        let post = try post("3kminimal0001")
        #expect(post.author.avatarURL == nil && post.language == nil && post.labels.isEmpty && post.attachments.isEmpty)
        #expect(post.replyTo == nil && post.quoteOf == nil && post.videoIDs.isEmpty && post.counts == Post.Counts())
        #expect(post.createdAt == Date(timeIntervalSince1970: 1_769_911_200), "a time with an offset")
        #expect(post.html == "<p>just text</p>")
    }

    @Test func theSortTimeIsTheRepostTimeOrThePostsEarlierTime() throws {
        let page = try BlueskyFeedResponse(body: Data(contentsOf: Self.fixture), barePosts: false)
        guard case .item(let repost) = page.entries[0], case .item(let minimal) = page.entries[7] else { Issue.record("items"); return }
        #expect(BlueskyPostService.sortTime(repost) == Date(timeIntervalSince1970: 1_769_943_600))
        #expect(BlueskyPostService.sortTime(minimal) == Date(timeIntervalSince1970: 1_769_911_200), "createdAt, earlier than indexedAt")
    }

    @Test(arguments: [
        (#", "likeCount": -1"#, "", "likeCount -1 is out of range"),
        (#", "likeCount": 1e3"#, "", "post.likeCount is not of the expected type"),
        (#", "repostCount": 99999999999999999999999"#, "", "post.repostCount is not of the expected type"),
        (#", "embed": {"$type": "app.bsky.embed.images#view", "images": [{"fullsize": "https://a/b", "thumb": "https://a/c", "alt": "", "aspectRatio": {"width": 0, "height": 3}}]}"#,
         "", "the aspect ratio 0:3 of an image is out of range"),
        (#", "embed": {"$type": "app.bsky.embed.video#view", "cid": "c", "playlist": "https://v/p.m3u8", "aspectRatio": {"width": 16, "height": 1000000}}"#,
         "", "the aspect ratio 16:1000000 of video c is out of range"),
        ("", #", "createdAt": "2026-02-30T00:00:00Z""#, "record.createdAt \"2026-02-30T00:00:00Z\" is not an RFC 3339 time"),
        ("", #", "reply": {"parent": {"uri": "https://evil.example/x"}}"#, "reply.parent.uri \"https://evil.example/x\" is not the at:// URI of a post"),
        ("", #", "langs": "en""#, "post.record.langs is not an array"),
    ] as [(String, String, String)])
    func aBadItemIsSkippedWithItsReason(_ extra: String, _ record: String, _ expected: String) throws {
        #expect(try skipReason(extra, record: record) == expected)
    }

    @Test func anItemWhoseURIIsNotItsAuthorsIsSkipped() throws {
        let json = #"{"feed": [{"post": {"uri": "at://did:plc:someoneelse/app.bsky.feed.post/3kx", "indexedAt": "2026-02-01T00:00:00Z", "author": {"did": "did:plc:bob", "handle": "bob.test"}, "record": {"text": "", "createdAt": "2026-02-01T00:00:00Z"}}}, {"post": {"uri": "at://did:plc:bob/app.bsky.feed.post/3ky"}}]}"#
        let read = BlueskyPostService.read(try BlueskyFeedResponse(body: Data(json.utf8), barePosts: false))
        #expect(read.entries.isEmpty)
        #expect(read.skipped.map(\.item) == [
            SkippedItem(id: "at://did:plc:someoneelse/app.bsky.feed.post/3kx", reason: "the post's repository did:plc:someoneelse is not its author's, did:plc:bob",
                        postID: "at://did:plc:someoneelse/app.bsky.feed.post/3kx"),
            SkippedItem(id: "at://did:plc:bob/app.bsky.feed.post/3ky", reason: "post.author is missing", postID: "at://did:plc:bob/app.bsky.feed.post/3ky"),
        ])
    }

    @Test func unsafeURLsAreNotStored() throws {
        let entry = try mapOne(#", "author": {"did": "did:plc:bob00000000000000000000002", "handle": "bob.example.com", "avatar": "javascript:alert(1)"}, "embed": {"$type": "app.bsky.embed.external#view", "external": {"uri": "file:///etc/passwd", "title": "t", "description": "d"}}"#)
        guard case .item(let item) = entry else { Issue.record("unreadable"); return }
        let post = try Post(item)
        #expect(post.author.avatarURL == nil && post.attachments.isEmpty)
    }

    @Test func searchResultsAreBarePostViews() throws {
        let json = #"{"hitsTotal": 1, "cursor": "25", "posts": [{"uri": "at://did:plc:bob/app.bsky.feed.post/3kz", "cid": "c", "indexedAt": "2026-02-01T00:00:00Z", "author": {"did": "did:plc:bob", "handle": "bob.test"}, "record": {"$type": "app.bsky.feed.post", "text": "found", "createdAt": "2026-02-01T00:00:00Z"}}]}"#
        let page = try BlueskyFeedResponse(body: Data(json.utf8), barePosts: true)
        #expect(page.cursor == "25")
        #expect(BlueskyPostService.read(page).entries.map(\.post.text) == ["found"])
    }

    @Test func theJWTsExpiryIsReadAndBounded() {
        func jwt(_ payload: String) -> String {
            let encoded = Data(payload.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            return "eyJhbGciOiJFUzI1NksifQ.\(encoded).c2ln"
        }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(BlueskyJWT.expiry(of: jwt(#"{"exp": 1800007200, "sub": "did:plc:me"}"#), now: now) == Date(timeIntervalSince1970: 1_800_007_200))
        #expect(BlueskyJWT.expiry(of: jwt(#"{"exp": 99999999999}"#), now: now) == now.addingTimeInterval(86_400), "at most a day")
        #expect(BlueskyJWT.expiry(of: jwt(#"{"exp": "soon"}"#), now: now) == nil)
        #expect(BlueskyJWT.expiry(of: "not.a-jwt", now: now) == nil)
        #expect(BlueskyJWT.subject(of: jwt(#"{"sub": "did:plc:me"}"#)) == "did:plc:me")
        #expect(BlueskyJWT.subject(of: jwt(#"{"sub": "../../etc"}"#)) == nil)
        #expect(BlueskyJWT.expiry(of: jwt(#"{"sub": 5, "exp": 1800007200, "x": [[{}]]}"#), now: now) == Date(timeIntervalSince1970: 1_800_007_200))
        #expect(BlueskyJWT.expiry(of: jwt(#"{"exp": 1800007200} trailing"#), now: now) == nil, "a payload that is not one JSON object")
        #expect(BlueskyJWT.expiry(of: jwt(#"{"exp": 01800007200}"#), now: now) == nil, "RFC 8259: no leading zeros")
    }

    @Test func aSessionAnswerIsReadWithTheOneJSONReader() throws {
        let session = try BlueskySessionResponse(body: Data(#"{"accessJwt": "a.b.c", "refreshJwt": "r.s.t", "handle": "me.test", "did": 7, "x": {"y": [1]}}"#.utf8))
        #expect(session.accessJwt == "a.b.c" && session.refreshJwt == "r.s.t" && session.did == nil)
        #expect(throws: JSONReader.FieldError.self) { try BlueskySessionResponse(body: Data(#"{"accessJwt": "a.b.c"}"#.utf8)) }
        #expect(throws: JSONReader.FieldError.self) { try BlueskySessionResponse(body: Data(#"{"accessJwt": 5, "refreshJwt": "r"}"#.utf8)) }
        #expect(throws: JSONReader.SyntaxError.self) { try BlueskySessionResponse(body: Data(#"{"accessJwt": "a", "refreshJwt": "r"} {}"#.utf8)) }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONReader.TooDeepError.self) {
            try BlueskySessionResponse(body: Data(#"{"accessJwt": "a", "refreshJwt": "r", "x": \#(deep)}"#.utf8))
        }
    }

    @Test func rateLimitResetsAsUnixTimesOrPolicyWindowsBecomeSecondsFromNow() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let unix = BlueskyClient.withRelativeReset(makeResponse(["RateLimit-Limit": "3000", "RateLimit-Remaining": "0",
                                                                             "RateLimit-Reset": "1800000042", "RateLimit-Policy": "3000;w=300"]), now: now)
        #expect(unix.header("RateLimit-Reset") == "42")
        let policyOnly = BlueskyClient.withRelativeReset(makeResponse(["RateLimit-Limit": "100", "RateLimit-Remaining": "3",
                                                                                   "RateLimit-Policy": "3000;w=300, 100;w=60"]), now: now)
        #expect(policyOnly.header("RateLimit-Reset") == "60")
        let relative = BlueskyClient.withRelativeReset(makeResponse(["RateLimit-Remaining": "3", "RateLimit-Reset": "17"]), now: now)
        #expect(relative.header("RateLimit-Reset") == "17")
    }

    @Test func errorsMapToCoreCodes() {
        func error(_ status: Int, _ body: String, _ headers: [String: String] = [:]) -> ServiceError.Code? {
            BlueskyClient.error(for: makeResponse(headers, status: status, body: body), "reading", now: Date(timeIntervalSince1970: 0))?.code
        }
        #expect(error(400, #"{"error": "ExpiredToken", "message": "Token has expired"}"#) == .unauthorized)
        #expect(error(400, #"{"error": "InvalidToken"}"#) == .unauthorized)
        #expect(error(401, #"{"error": "AuthenticationRequired"}"#) == .unauthorized)
        #expect(error(400, #"{"error": "UnknownFeed"}"#) == .invalidRequest)
        #expect(error(429, #"{"error": "RateLimitExceeded"}"#, ["RateLimit-Remaining": "0", "RateLimit-Reset": "30"]) == .rateLimited(until: Date(timeIntervalSince1970: 30)))
        #expect(error(429, "") == .rateLimited(until: Date(timeIntervalSince1970: 60)))
        #expect(error(502, "<html>") == .unavailable)
        #expect(error(200, "{}") == nil)
    }

    @Test func timelinesParseFromConfigText() {
        #expect(BlueskyTimeline("home") == .home && BlueskyTimeline("likes") == .likes)
        #expect(BlueskyTimeline("author:@Alice.bsky.social") == .author("alice.bsky.social"))
        #expect(BlueskyTimeline("author:did:plc:abc") == .author("did:plc:abc"))
        #expect(BlueskyTimeline("feed:at://did:plc:abc/app.bsky.feed.generator/whats-hot") == .feed("at://did:plc:abc/app.bsky.feed.generator/whats-hot"))
        #expect(BlueskyTimeline("list:at://did:plc:abc/app.bsky.graph.list/3k") == .list("at://did:plc:abc/app.bsky.graph.list/3k"))
        #expect(BlueskyTimeline("search:swift lang:en") == .search("swift lang:en"))
        for bad in ["", "homes", "author:alice", "author:@", "feed:https://x", "list:at://did:plc:abc/app.bsky.feed.post/3k", "search:"] {
            #expect(BlueskyTimeline(bad) == nil, "\(bad)")
        }
    }

    @Test func cursorsRoundTripAndRejectForeignText() {
        for state in [BlueskyCursor.idle(watermark: nil), .idle(watermark: 1_769_940_000_123_456),
                      .backfill(fetched: 200, top: 5, next: "1769940000000::bafy cursor"), .catchUp(watermark: 7, top: nil, next: "abc")] {
            #expect(BlueskyCursor(state.feedCursor) == state)
        }
        #expect(BlueskyCursor(FeedCursor(position: "forward https://x")) == nil)
        #expect(BlueskyCursor(FeedCursor(position: "bluesky backfill 1 - \u{7}")) == nil)
    }
}

/// A response for the tests above.
func makeResponse(_ headers: [String: String], status: Int = 200, body: String = "") -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: Data(body.utf8))
}
