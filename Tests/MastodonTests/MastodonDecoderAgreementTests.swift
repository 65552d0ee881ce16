import Core
import Foundation
@testable import Mastodon
import Testing

/// The `JSONReader` decoder against the Codable decoder it replaced (kept in
/// `LegacyCodablePage`): the same posts, skipped ids and videos.
@Suite struct MastodonDecoderAgreementTests {
    func expectAgreement(_ body: Data, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let legacy = try #require(LegacyCodablePage.map(body), "the Codable path reads \(what)", sourceLocation: sourceLocation)
        let fast = try mapPage(body)
        #expect(fast.posts == legacy.posts, "\(what)", sourceLocation: sourceLocation)
        #expect(fast.skipped.map(\.id) == legacy.skipped.map(\.id), "\(what)", sourceLocation: sourceLocation)
        #expect(fast.videos == legacy.videos, "\(what)", sourceLocation: sourceLocation)
    }

    @Test(arguments: ["status_plain.json", "status_reblog.json", "status_reply_cw_edited.json", "status_media.json", "status_minimal.json"])
    func everyFixtureEntityMapsAsBefore(name: String) throws {
        let entity = try String(contentsOf: fixtures.appendingPathComponent("entities/\(name)"), encoding: .utf8)
        try expectAgreement(page([entity]), name)
        #expect(try mapPage(page([entity])).posts.count == 1, "\(name) is a post, not a skipped item")
    }

    @Test func aRecordedPageOfTheFakeServerMapsAsBefore() throws {
        try expectAgreement(recordedPage, "pages/home.json")
        let mapped = try mapPage(recordedPage)
        #expect(mapped.posts.count == 40 && mapped.skipped.isEmpty)
        #expect(mapped.posts.contains { $0.repost != nil } && !mapped.videos.isEmpty)
    }

    /// Values the two decoders must treat alike: kept or skipped, and mapped the same when kept.
    @Test(arguments: [
        #""replies_count": 5.0, "reblogs_count": 5e2, "favourites_count": -3"#,
        #""replies_count": 3.5"#,
        #""replies_count": 1e300"#,
        #""favourites_count": 9223372036854775808"#,
        #""language": null, "edited_at": null, "in_reply_to_id": null, "spoiler_text": null, "reblog": null"#,
        #""media_attachments": null"#,
        #""media_attachments": [{"id": "m1", "type": "video", "url": "https://f.example/v.mp4", "meta": {"original": {"duration": 1e300}}}]"#,
        #""media_attachments": [{"id": "m1", "type": "video", "url": "https://f.example/v.mp4", "meta": {"original": {"width": 2.5}}}]"#,
        #""media_attachments": [{"id": "m1", "type": "video", "url": "https://f.example/v.mp4", "meta": null}]"#,
        #""media_attachments": [{"id": "m1", "type": "gifv", "url": "https://f.example/v.mp4", "meta": {"original": null}}]"#,
        #""media_attachments": [{"id": "m1", "type": "video", "url": "javascript:alert(1)", "preview_url": "file:///etc/passwd"}]"#,
        #""media_attachments": [{"id": "m1", "type": "image", "url": "https://f.example/i.png", "preview_url": "javascript:x"}]"#,
        #""media_attachments": [{"id": "m1", "type": "unknown", "url": null, "remote_url": "https://r.example/x"}]"#,
        #""media_attachments": [{"id": "m1", "url": "https://f.example/i.png"}]"#,
        #""media_attachments": ["m1"]"#,
        #""content": "<p>a &amp;amp; b &#x1F600; &#39; &bogus; &#xD800; <br/>c</p><p>d</p>""#,
        #""visibility": "private""#, #""visibility": "cosmic""#, #""visibility": 3"#,
        #""created_at": "2026-02-30T00:00:00Z""#, #""edited_at": "yesterday""#,
        #""account": {"id": "", "acct": "ada"}"#, #""account": {"id": "1"}"#, #""account": null"#,
        #""reblog": {"id": "9", "created_at": "2026-11-19T08:00:00Z", "account": {"id": "2", "acct": "bob@b.example"}}"#,
        #""reblog": {"id": "9", "created_at": "2026-11-19T08:00:00Z", "account": {"id": "2"}}"#,
        #""reblog": "9""#,
        #""spoiler_text": "", "language": "en", "in_reply_to_id": "4""#,
    ])
    func hostileAndOddValuesAreTreatedAsBefore(fields: String) throws {
        try expectAgreement(page([status("7", fields), status("8")]), fields)
    }
}
