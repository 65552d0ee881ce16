import Core
import Foundation
import IntegrationKit
@testable import Mastodon
import Testing

/// One status that cannot be read is skipped with the path of its bad field; the rest of its
/// page stands, and only broken JSON fails the page.
@Suite struct MastodonDecoderSkipTests {
    func skipped(_ fields: String, id: String = "7") throws -> SkippedItem? {
        let mapped = try mapPage(page([status("1"), status(id, fields), status("2")]))
        #expect(mapped.posts.map(\.id) == ["1", "2"], "the rest of the page stands")
        return mapped.skipped.first
    }

    @Test(arguments: [
        (#""account": {"id": "1", "username": "ada"}"#, "account.acct is missing"),
        (#""account": {"id": "1", "acct": null}"#, "account.acct is null"),
        (#""account": {"id": 1, "acct": "ada"}"#, "account.id has the wrong type"),
        (#""account": []"#, "account has the wrong type"),
        (#""media_attachments": [{"id": "m1", "type": "video", "meta": {"original": {"width": "640"}}}]"#,
         "media_attachments.meta.original.width has the wrong type"),
        (#""media_attachments": [{"id": "m1", "type": "video", "meta": {"original": {"duration": "5"}}}]"#,
         "media_attachments.meta.original.duration has the wrong type"),
        (#""media_attachments": [{"id": "m1", "type": "video", "meta": {"original": {"duration": 1e400}}}]"#,
         "media_attachments.meta.original.duration is out of range"),
        (#""media_attachments": [{"id": "m1", "type": "video", "meta": "big"}]"#, "media_attachments.meta has the wrong type"),
        (#""media_attachments": [{"type": "video"}]"#, "media_attachments.id is missing"),
        (#""media_attachments": {"id": "m1"}"#, "media_attachments has the wrong type"),
        (#""replies_count": 1e300"#, "replies_count is out of range"),
        (#""favourites_count": 2.5"#, "favourites_count is not a whole number"),
        (#""reblogs_count": "12""#, "reblogs_count has the wrong type"),
        (#""language": ["en"]"#, "language has the wrong type"),
        (#""reblog": {"id": "9", "created_at": "2026-11-19T08:00:00Z", "account": {"id": "2"}}"#, "reblog.account.acct is missing"),
        (#""reblog": {"id": "9", "account": {"id": "2", "acct": "b"}}"#, "reblog.created_at is missing"),
        (#""reblog": {"id": "9", "created_at": "2026-11-19T08:00:00Z", "account": {"id": "2", "acct": "b"}, "media_attachments": [{"id": 5, "type": "image"}]}"#,
         "reblog.media_attachments.id has the wrong type"),
        (#""created_at": "yesterday""#, "created_at \"yesterday\" is not an ISO 8601 time"),
        (#""visibility": "cosmic""#, "visibility \"cosmic\" is not one Mastodon documents"),
        (#""media_attachments": [{"id": "m1", "type": "video", "url": "https://f.example/v.mp4", "meta": {"original": {"duration": -10}}}]"#,
         "media m1: duration -10.0 is out of range"),
        (#""media_attachments": [{"id": "m1", "type": "video", "url": "https://f.example/v.mp4", "meta": {"original": {"width": 0}}}]"#,
         "media m1: width 0 is out of range"),
        (#""media_attachments": [{"id": "m1", "type": "video", "url": "https://f.example/v.mp4", "meta": {"original": {"frame_rate": "1e400/1"}}}]"#,
         "media m1: frame_rate \"1e400/1\" is not a frame rate"),
    ])
    func aBadFieldSkipsItsStatusWithAReasonNamingItsPath(fields: String, reason: String) throws {
        let item = try #require(try skipped(fields))
        #expect(item == SkippedItem(id: "7", reason: reason, postID: "7"))
    }

    @Test func anIDThatIsNotAStringIsReportedWithoutOne() throws {
        let mapped = try mapPage(page([#"{"id": 110000000000000001, "created_at": "2026-11-20T10:15:30.000Z", "account": {"id": "1", "acct": "a"}}"#,
                                       status("2")]))
        #expect(mapped.skipped == [SkippedItem(id: nil, reason: "id has the wrong type")])
        #expect(mapped.posts.map(\.id) == ["2"])
    }

    @Test func anElementThatIsNotAnObjectIsSkipped() throws {
        let mapped = try mapPage(page(["null", "42", #""s""#, "[]", status("2")]))
        #expect(mapped.skipped == Array(repeating: SkippedItem(id: nil, reason: "the status has the wrong type"), count: 4))
        #expect(mapped.posts.map(\.id) == ["2"])
    }

    @Test func theIDOfABadStatusIsFoundWhereverItStands() throws {
        let body = page([#"{"account": {"id": "1"}, "created_at": "2026-11-20T10:15:30.000Z", "id": "77"}"#])
        #expect(try mapPage(body).skipped == [SkippedItem(id: "77", reason: "account.acct is missing", postID: "77")])
    }

    @Test func urlsOtherThanHTTPAreDroppedNotStored() throws {
        let fields = #""account": {"id": "1", "acct": "ada", "avatar": "javascript:alert(1)"}, "media_attachments": [{"id": "m1", "type": "video", "url": "file:///etc/passwd"}, {"id": "m2", "type": "image", "url": "https://f.example/i.png", "preview_url": "data:text/html,x"}]"#
        let post = try #require(try mapPage(page([status("7", fields)])).posts.first)
        #expect(post.author.avatarURL == nil && post.videoIDs.isEmpty)
        #expect(post.attachments.map(\.url.absoluteString) == ["https://f.example/i.png"] && post.attachments.first?.previewURL == nil)
    }

    @Test func controlCharactersAndLoneSurrogatesAreKeptAsDataOrReplaced() throws {
        let fields = #""content": "<p>\u001b[31mred\u0000</p>", "spoiler_text": "\ud800", "account": {"id": "1", "acct": "ada", "display_name": "\u001b]0;title\u0007"}"#
        let post = try #require(try mapPage(page([status("7", fields)])).posts.first)
        // The mirror keeps what the server sent, but for NUL (U+FFFD); every printer escapes it (Terminal.safe).
        #expect(post.text == "\u{1B}[31mred\u{FFFD}" && post.author.displayName == "\u{1B}]0;title\u{7}")
        #expect(post.contentWarning == "\u{FFFD}")
        #expect(Terminal.safe(post.text) == "\\u{1b}[31mred\u{FFFD}")
    }

    @Test func aRawControlCharacterOrBrokenJSONFailsThePage() async throws {
        for body in ["[\(status("1", "\"content\": \"a\u{01}b\""))]", "[\(status("1"))", "[\(status("1"))] x", #"{"error": "x"}"#, "", "[1,]"] {
            let service = makePostService([HTTPResponse(status: 200, body: Data(body.utf8))])
            let error = await #expect(throws: ServiceError.self, "\(body.prefix(40))") { try await service.page(after: nil, session: Session(accessToken: Secret("tok"))) }
            #expect(error?.code == .invalidResponse)
        }
    }

    @Test func theServiceReportsSkippedStatusesAndKeepsTheRest() async throws {
        let body = page([status("3"), status("2", #""account": {"id": "1"}"#), status("1")])
        let service = makePostService([HTTPResponse(status: 200, headers: ["Link": #"<http://127.0.0.1:1/api/v1/timelines/home?max_id=1>; rel="next""#], body: body)])

        let result = try await service.page(after: nil, session: Session(accessToken: Secret("tok")))

        let ids: [PostID] = result.changes.compactMap { if case .upsert(let post) = $0 { post.id } else { nil } }
        #expect(ids == ["1", "3"], "oldest first")
        #expect(result.skipped == [SkippedItem(id: "2", reason: "account.acct is missing", postID: "2")])
        #expect(result.hasMore)
    }
}
