import Core
import Foundation
import IntegrationKit
@testable import Mastodon
import Synchronization
import Testing

// MARK: Helpers

let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fixtures/mastodon")

/// A real page of the fake server's home timeline (`--seed 1`, `limit=40`): reblogs, replies,
/// content warnings, an edit, images, videos and gifvs, escaped the way Rails escapes JSON.
let recordedPage = try! Data(contentsOf: fixtures.appendingPathComponent("pages/home.json"))

func readStatus(_ data: Data) throws -> MastodonStatus {
    try data.withUnsafeBytes { raw in
        var reader = JSONReader(raw.bindMemory(to: UInt8.self))
        return try MastodonStatus(reading: &reader)
    }
}

func readMedia(_ data: Data) throws -> MastodonMediaAttachment {
    try data.withUnsafeBytes { raw in
        var reader = JSONReader(raw.bindMemory(to: UInt8.self))
        return try MastodonMediaAttachment(reading: &reader, path: "media_attachments")
    }
}

/// What the decoder and the mapping make of a page body.
func mapPage(_ body: Data) throws -> (posts: [Post], skipped: [SkippedItem], videos: [VideoID: Video]) {
    MastodonTimelineResponse.mapped(try MastodonTimelineResponse(body: body).items)
}

func page(_ statuses: [String]) -> Data { Data("[\(statuses.joined(separator: ","))]".utf8) }

/// A status as the documentation shows one, with `fields` (a JSON object's members) in place
/// of the fields they name: the two decoders read duplicate keys differently, so there are none.
func status(_ id: String = "110000000000000001", _ fields: String = "") -> String {
    let defaults = [("id", "\"\(id)\""), ("created_at", "\"2026-11-20T10:15:30.000Z\""), ("visibility", "\"public\""),
                    ("content", "\"<p>hi</p>\""), ("media_attachments", "[]"),
                    ("account", #"{"id": "1", "username": "ada", "acct": "ada", "display_name": "Ada", "avatar": "https://files.example/a.png"}"#)]
    var named: Set<String> = []
    Data("{\(fields)}".utf8).withUnsafeBytes { raw in
        var reader = JSONReader(raw.bindMemory(to: UInt8.self))
        // Fields that are not JSON on purpose are spliced in as they are.
        try? reader.readObject { reader, key in
            named.insert(key)
            try reader.skipValue()
        }
    }
    let members = defaults.filter { !named.contains($0.0) }.map { "\"\($0.0)\": \($0.1)" } + (fields.isEmpty ? [] : [fields])
    return "{" + members.joined(separator: ", ") + "}"
}

/// Answers every request with the next scripted response, recording the requests.
final class StubTransport: HTTPTransport {
    private let script: Mutex<[HTTPResponse]>

    init(_ responses: [HTTPResponse]) { script = Mutex(responses) }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let next = script.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            throw ServiceError(.unavailable, "sending", "the connection was refused")
        }
        return next
    }

    func close() async {}
}

func makePostService(_ responses: [HTTPResponse]) -> MastodonPostService {
    let client = MastodonClient(server: URL(string: "http://127.0.0.1:1")!, token: Secret("tok"), transport: StubTransport(responses),
                                requests: RequestCounter(), gate: HostGate(), pacer: RateLimitPacer())
    return MastodonPostService(client: client, timeline: .home, pageSize: 40, maxPosts: nil, since: nil,
                               accounts: AccountLookup(client: client))
}

// MARK: Agreement with the Codable path

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

    @Test func theHTMLRendererAgreesOnTrickyMarkup() {
        let samples = [
            "", "   ", "<p></p>", "plain", "<p>a</p><p>b</p>", "<p>a</p>", "a</p>b", "<P>a</P><p>b</P>", "<br>", "<BR/>x<br />y<bR>z",
            "<brx>", "<b>bold</b>", "a < b", "a > b", "<unclosed", "x<", "&", "&amp", "&amp;", "&amp;&lt;&gt;&quot;&apos;&nbsp;",
            "&#65;&#x41;&#X41;&#+65;&#-0;&#0065;&#;&#x;&#1114112;&#xD800;", "&verylongnamehere;", "&abcdefghij;", "&abcdefghijk;",
            "&#128512;", "\u{00A0}text\u{00A0}", "\u{200B}x\u{3000}", "\r\n x \r\n", "\t\u{85}x\u{2028}", "café 東京 🚀", "a&#10;b",
            "<p>Tom &amp; Jerry</p><p>x &lt; y &amp;&amp; y &gt; z</p>", "&lt;p&gt;not a tag&lt;/p&gt;", "<p>a<br>b</p>\n<p>c</p>",
        ]
        for html in samples {
            #expect(MastodonHTML.plainText(html) == LegacyCodablePage.plainText(html), "\(html.debugDescription)")
        }
        var random = SplitMix64(state: 0xC0FFEE)
        let pieces = ["<p>", "</p>", "<br>", "<br/>", "</P>", "<a href=\"x\">", "</a>", "&amp;", "&lt;", "&#39;", "&#x1F600;", "&nbsp;",
                      "&", ";", "<", ">", "#", "x", " ", "\n", "\u{A0}", "é", "東", "🚀", "p", "br", "\u{200B}"]
        for _ in 0..<2000 {
            let html = (0..<Int(random.next() % 12)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            #expect(MastodonHTML.plainText(html) == LegacyCodablePage.plainText(html), "\(html.debugDescription)")
        }
    }
}

// MARK: Per-status loss

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
        #expect(item == SkippedItem(id: "7", reason: reason))
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
        #expect(try mapPage(body).skipped == [SkippedItem(id: "77", reason: "account.acct is missing")])
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
        // The mirror keeps what the server sent; every printer escapes it (Terminal.safe).
        #expect(post.text == "\u{1B}[31mred\u{0}" && post.author.displayName == "\u{1B}]0;title\u{7}")
        #expect(post.contentWarning == "\u{FFFD}")
        #expect(Terminal.safe(post.text) == "\\u{1b}[31mred\\u{0}")
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
        #expect(result.skipped == [SkippedItem(id: "2", reason: "account.acct is missing")])
        #expect(result.hasMore)
    }
}

// MARK: Fuzz

/// Mutations of a real page through the decoder, the mapping and the post service: whatever
/// arrives, the answer is a page or a ``ServiceError``, never a crash or another error.
@Suite struct MastodonDecodingFuzzTests {
    static let fragments: [String] = [
        "null", "[]", "{}", "\"\"", "0", "-1", "1e300", "1e400", "2.5", "true", "\"\\u0000\"", "\"\\ud800\"", "\"javascript:x\"",
        "\"2026-13-45T99:99:99Z\"", #""id""#, #""account""#, #""reblog":{"#, #""media_attachments":[{"#, "9223372036854775808",
        String(repeating: "[", count: 600), String(repeating: "{\"reblog\":", count: 50),
    ]

    func mutate(_ data: Data, _ random: inout SplitMix64) -> Data {
        var bytes = [UInt8](data)
        // Half the time only values change, so the body mostly stays JSON and the checks of
        // single statuses get their turn; otherwise the bytes themselves are broken.
        if random.next() % 2 == 0 {
            for _ in 0...(random.next() % 3) {
                replaceValue(after: Int(random.next() % UInt64(bytes.count)), in: &bytes,
                             with: Self.fragments[Int(random.next() % UInt64(Self.fragments.count))])
            }
            return Data(bytes)
        }
        for _ in 0...(random.next() % 4) where !bytes.isEmpty {
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 7 {
            case 0: bytes[at] ^= UInt8(1 << (random.next() % 8))
            case 1: bytes.removeSubrange(at...)
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int(random.next() % 64)))
            case 3: bytes.insert(contentsOf: Self.fragments[Int(random.next() % UInt64(Self.fragments.count))].utf8, at: at)
            case 4: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + Int(random.next() % 400))], at: at)
            case 5: bytes[at] = [UInt8(ascii: "\""), UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0xFF, 0][Int(random.next() % 6)]
            default: replaceValue(after: at, in: &bytes, with: Self.fragments[Int(random.next() % UInt64(Self.fragments.count))])
            }
        }
        return Data(bytes)
    }

    /// Replaces the first plain value (a string, number or literal) after `start` with
    /// `fragment`: the body stays JSON more often, so the per-status checks get their turn.
    func replaceValue(after start: Int, in bytes: inout [UInt8], with fragment: String) {
        guard let colon = bytes[start...].firstIndex(of: UInt8(ascii: ":")) else { return }
        var end = colon + 1
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            end += 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
            end = min(end + 1, bytes.count)
        } else {
            while end < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "[")].contains(bytes[end]) {
                end += 1
            }
        }
        bytes.replaceSubrange((colon + 1)..<end, with: fragment.utf8)
    }

    @Test(.timeLimit(.minutes(1))) func mutatedPagesYieldAPageOrATypedError() async throws {
        var random = SplitMix64(state: 20261122)
        var outcomes = (pages: 0, skipped: 0, failed: 0)
        for _ in 0..<1000 {
            let body = mutate(recordedPage, &random)
            do {
                let items = try MastodonTimelineResponse(body: body).items
                let mapped = MastodonTimelineResponse.mapped(items)
                #expect(mapped.posts.count + mapped.skipped.count == items.count, "every status is a post or a skipped item")
                #expect(mapped.skipped.allSatisfy { !$0.reason.isEmpty })
                outcomes.pages += 1
                outcomes.skipped += mapped.skipped.count
            } catch is JSONReader.SyntaxError {
                outcomes.failed += 1
            } catch is JSONReader.FieldError {
                outcomes.failed += 1
            } catch {
                Issue.record("an untyped error escaped: \(type(of: error)): \(error)")
            }
            let service = makePostService([HTTPResponse(status: 200, body: body)])
            do {
                _ = try await service.page(after: nil, session: Session(accessToken: Secret("tok")))
            } catch let error as ServiceError {
                #expect(error.code == .invalidResponse)
            } catch {
                Issue.record("the service let an untyped error escape: \(type(of: error)): \(error)")
            }
        }
        #expect(outcomes.pages > 100 && outcomes.skipped > 50 && outcomes.failed > 100, "\(outcomes)")
    }
}

/// SplitMix64, so every run mutates the same way.
struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
