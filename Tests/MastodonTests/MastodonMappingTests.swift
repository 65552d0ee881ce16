import Core
import Foundation
@testable import Mastodon
import Testing

/// Mapping the Mastodon entities (shaped like the API documentation's examples) into Core.
@Suite struct MastodonMappingTests {
    static let account = #"{"id": "1", "username": "ada", "acct": "ada", "display_name": "Ada", "avatar": "https://files.example/a.png", "url": "https://example.social/@ada"}"#
    static let booster = #"{"id": "2", "username": "bob", "acct": "bob@other.example", "display_name": "", "avatar": "https://files.example/b.png"}"#

    func status(_ json: String) throws -> Post {
        try Post(readStatus(Data(json.utf8)))
    }

    @Test func aPlainStatusKeepsItsHTMLAndGetsAPlainTextRendering() throws {
        let post = try status("""
            {"id": "110000000000000001", "created_at": "2026-11-20T10:15:30.000Z", "in_reply_to_id": null, "spoiler_text": "",
             "visibility": "public", "language": "en", "replies_count": 2, "reblogs_count": 3, "favourites_count": 4,
             "edited_at": null, "content": "<p>Hello &amp; welcome, <span class=\\"h-card\\"><a href=\\"https://example.social/@bob\\" class=\\"u-url mention\\">@<span>bob</span></a></span>!<br>It&#39;s <a href=\\"https://example.social/tags/swift\\" class=\\"mention hashtag\\">#<span>swift</span></a></p><p>Second &lt;para&gt;</p>",
             "reblog": null, "account": \(Self.account), "media_attachments": [], "mentions": [], "tags": [], "emojis": []}
            """)
        #expect(post.id == "110000000000000001")
        #expect(post.text == "Hello & welcome, @bob!\nIt's #swift\n\nSecond <para>")
        #expect(post.html?.hasPrefix("<p>Hello &amp; welcome") == true)
        #expect(post.author == User(id: "1", handle: "ada", displayName: "Ada", avatarURL: URL(string: "https://files.example/a.png")))
        #expect(post.language == "en" && post.visibility == .public && post.contentWarning == nil && post.repost == nil)
        #expect(post.counts == Post.Counts(replies: 2, reposts: 3, likes: 4))
        #expect(post.createdAt == Date(timeIntervalSince1970: 1_795_169_730))
    }

    @Test func aReblogKeepsTheBoosterAndTheOriginal() throws {
        let post = try status("""
            {"id": "110000000000000009", "created_at": "2026-11-20T11:00:00.000Z", "visibility": "public", "content": "",
             "account": \(Self.booster), "media_attachments": [],
             "reblog": {"id": "109999999999999990", "created_at": "2026-11-19T08:00:00Z", "visibility": "public",
                        "content": "<p>original words</p>", "account": \(Self.account), "replies_count": 7, "media_attachments": []}}
            """)
        #expect(post.id == "110000000000000009", "the timeline entry keeps the reblog's id")
        #expect(post.text == "original words" && post.author.handle == "ada" && post.counts.replies == 7)
        #expect(post.repost == Post.Repost(by: User(id: "2", handle: "bob@other.example", displayName: "bob",
                                                    avatarURL: URL(string: "https://files.example/b.png")),
                                           originalID: "109999999999999990", at: post.createdAt),
                "the booster, and when: the reblog's own time")
    }

    @Test func aReplyWithAContentWarningThatWasEdited() throws {
        let post = try status("""
            {"id": "5", "created_at": "2026-11-20T10:00:00Z", "in_reply_to_id": "4", "spoiler_text": "food", "visibility": "private",
             "edited_at": "2026-11-20T10:05:00.123Z", "content": "<p>soup</p>", "account": \(Self.account), "media_attachments": []}
            """)
        #expect(post.replyTo == "4" && post.contentWarning == "food" && post.visibility == .followersOnly)
        #expect(abs((post.editedAt?.timeIntervalSince1970 ?? 0) - 1_795_169_100.123) < 0.001)
    }

    @Test func videoAndGifvBecomeVideosAndImagesAndAudioStayAttachments() throws {
        let json = """
            {"id": "6", "created_at": "2026-11-20T10:00:00Z", "visibility": "public", "content": "<p>media</p>", "account": \(Self.account),
             "media_attachments": [
               {"id": "m1", "type": "video", "url": "https://files.example/v.mp4", "preview_url": "https://files.example/v.png",
                "description": "a clip", "meta": {"original": {"width": 640, "height": 360, "frame_rate": "30000/1001", "duration": 5.2}}},
               {"id": "m2", "type": "gifv", "url": "https://files.example/g.mp4", "preview_url": null, "meta": {"original": {"width": 320, "height": 240, "frame_rate": "25/1"}}},
               {"id": "m3", "type": "image", "url": "https://files.example/i.jpg", "preview_url": "https://files.example/i-small.jpg", "description": "a cat"},
               {"id": "m4", "type": "audio", "url": "https://files.example/a.mp3", "preview_url": null, "description": null}]}
            """
        let dto = try readStatus(Data(json.utf8))
        let post = try Post(dto)
        #expect(post.videoIDs == ["m1", "m2"])
        #expect(post.attachments.map(\.kind) == ["image", "audio"] && post.attachments.first?.description == "a cat")
        let video = try #require(try dto.mediaAttachments?.compactMap { try Video($0) }.first)
        #expect(video.width == 640 && video.height == 360 && video.duration == 5.2 && video.title == "a clip")
        #expect(abs((video.framesPerSecond ?? 0) - 29.97) < 0.01)
        #expect(video.thumbnailURL == URL(string: "https://files.example/v.png"))
    }

    @Test func aMinimalStatusFromASmallServerMaps() throws {
        let post = try status("""
            {"id": "01HXYZ", "created_at": "2026-11-20T10:00:00Z", "content": "<p>hi</p>", "visibility": "public",
             "account": {"id": "01ABC", "username": "gts", "acct": "gts", "url": "https://gts.example/@gts", "avatar": "https://gts.example/a.png"},
             "media_attachments": [], "mentions": [], "tags": [], "emojis": []}
            """)
        #expect(post.text == "hi" && post.language == nil && post.editedAt == nil && post.counts == Post.Counts())
        #expect(post.author.displayName == "gts")
    }

    @Test func badStatusesAreInvalidItemsNamingTheField() throws {
        #expect(throws: ServiceError.self) { try status(#"{"id": "7", "created_at": "yesterday", "account": \#(Self.account)}"#) }
        #expect(throws: ServiceError.self) { try status(#"{"id": "7", "created_at": "2026-11-20T10:00:00Z", "visibility": "cosmic", "account": \#(Self.account)}"#) }
    }
}

@Suite struct MastodonPlumbingTests {
    @Test func hostileNumbersAndURLsInMediaAreRefusedNotStored() throws {
        func media(_ json: String) throws -> MastodonMediaAttachment {
            try readMedia(Data(json.utf8))
        }
        for meta in [#"{"original": {"duration": 1e300}}"#, #"{"original": {"duration": -10}}"#,
                     #"{"original": {"frame_rate": "1e400/1"}}"#, #"{"original": {"width": 0}}"#] {
            let dto = try media(#"{"id": "m1", "type": "video", "url": "https://files.example/m1.mp4", "meta": \#(meta)}"#)
            #expect(throws: ServiceError.self, "\(meta)") { _ = try Video(dto) }
        }
        let script = try media(#"{"id": "m2", "type": "video", "url": "javascript:alert(1)", "preview_url": "file:///etc/passwd"}"#)
        #expect(try Video(script) == nil)
        let image = try media(#"{"id": "m3", "type": "image", "url": "https://files.example/a.png", "preview_url": "javascript:x"}"#)
        #expect(Post.Attachment(image)?.previewURL == nil)
    }

    @Test(arguments: [("home", MastodonTimeline.home), ("list:42", .list("42")), ("account:109", .account("109")),
                      ("account:@bob@other.example", .accountNamed("bob@other.example")), ("bookmarks", .bookmarks),
                      ("favourites", .favourites), ("hashtag:swift", .hashtag("swift")), ("hashtag:#swift", .hashtag("swift"))])
    func timelinesParse(text: String, timeline: MastodonTimeline) {
        #expect(MastodonTimeline(text) == timeline)
    }

    @Test(arguments: ["", "homes", "list:", "account:", "account:@", "hashtag:"])
    func badTimelinesDoNot(text: String) {
        #expect(MastodonTimeline(text) == nil)
    }

    @Test func cursorsRoundTripThroughTheirOpaqueForm() {
        let url = URL(string: "https://example.social/api/v1/bookmarks?min_id=5")!
        for cursor in [MastodonCursor.forward(url), .backfill(fetched: 80, forward: url, next: URL(string: "https://e/x?max_id=1")!),
                       .backfill(fetched: 0, forward: nil, next: url)] {
            #expect(MastodonCursor(cursor.feedCursor) == cursor)
        }
        #expect(MastodonCursor(FeedCursor(position: "20000")) == nil, "a cursor from another integration is refused")
    }

    @Test func aSinceIDForwardLinkIsWalkedAsMinIDSoNothingIsSkipped() {
        let sinceLink = URL(string: "https://example.social/api/v1/bookmarks?since_id=123&limit=40")!
        #expect(MastodonPostService.walkingForward(sinceLink).absoluteString == "https://example.social/api/v1/bookmarks?min_id=123&limit=40")
        let minLink = URL(string: "https://example.social/api/v1/timelines/home?min_id=9")!
        #expect(MastodonPostService.walkingForward(minLink) == minLink)
    }

    @Test func frameRatesParseAsFractionsOrNumbers() {
        #expect(Video.frameRate("25/1") == 25 && Video.frameRate("30") == 30 && Video.frameRate("1/0") == nil && Video.frameRate("x") == nil)
    }

    @Test func plainHTTPIsOnlyForLoopback() throws {
        func make(_ server: String) throws {
            guard case .object(let object) = try JSONDecoder().decode(ConfigValue.self, from: Data(
                #"{"integration": "mastodon", "server": "\#(server)", "accessTokenEnv": "T", "timeline": "home"}"#.utf8)) else { return }
            _ = try MastodonIntegration.makeBackend(ConfigSection(object, path: "feeds[0].posts", context: ConfigContext(
                fileName: "f", directory: URL(fileURLWithPath: "/"), environment: ["T": "tok"])), context: IntegrationContext())
        }
        #expect(throws: ConfigError.self) { try make("http://example.social") }
        try make("https://example.social")
        try make("http://127.0.0.1:8090")
    }
}

/// The entity files in Fixtures/mastodon/entities, modelled on the documentation's examples.
@Suite struct MastodonEntityFixtureTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/mastodon/entities")

    func post(_ name: String) throws -> (Post, MastodonStatus) {
        let dto = try readStatus(Data(contentsOf: Self.folder.appendingPathComponent(name)))
        return (try Post(dto), dto)
    }

    @Test func everyDocumentedStatusShapeMaps() throws {
        let (plain, _) = try post("status_plain.json")
        #expect(plain.text.hasPrefix("Finally shipped the offline cache: cold reads < 2 ms & no more \"spinner of doom\". It's all SQLite"))
        #expect(plain.text.contains("Write-up: https://blog.example.com/2024/11/offline-first-sqlite-sync\n#Swift #SQLite"), "\(plain.text)")
        #expect(!plain.text.contains("<span") && plain.html?.hasPrefix("<p>") == true && plain.language != nil)
        let (reblog, _) = try post("status_reblog.json")
        #expect(reblog.repost != nil && reblog.repost?.by.id != reblog.author.id)
        let (reply, _) = try post("status_reply_cw_edited.json")
        #expect(reply.replyTo != nil && reply.contentWarning != nil && reply.editedAt != nil && reply.visibility == .unlisted)
        let (media, dto) = try post("status_media.json")
        #expect(media.videoIDs.count == 2 && media.attachments.map(\.kind).sorted() == ["audio", "image"])
        #expect(try dto.mediaAttachments?.compactMap { try Video($0) }.allSatisfy { ($0.width ?? 0) > 0 } == true)
        let (minimal, _) = try post("status_minimal.json")
        #expect(minimal.language == nil && minimal.editedAt == nil)
        let account = try MastodonAccount(body: Data(contentsOf: Self.folder.appendingPathComponent("account.json")))
        #expect(try User(account).handle == account.acct)
    }
}
