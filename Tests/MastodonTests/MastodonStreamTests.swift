import Core
import Foundation
import IntegrationKit
@testable import Mastodon
import Testing

/// The streaming side of the Mastodon integration: which stream, where, and what its events become.
@Suite struct MastodonStreamTests {
    @Test func eachStreamableTimelineHasItsStream() throws {
        let cases: [(String, String?, [URLQueryItem])] = [
            ("home", "/api/v1/streaming/user", []),
            ("list:42", "/api/v1/streaming/list", [URLQueryItem(name: "list", value: "42")]),
            ("hashtag:#Swift", "/api/v1/streaming/hashtag", [URLQueryItem(name: "tag", value: "Swift")]),
            ("public", "/api/v1/streaming/public", []), ("public:local", "/api/v1/streaming/public/local", []),
            ("bookmarks", nil, []), ("favourites", nil, []), ("account:7", nil, []), ("account:@a@b.example", nil, []),
        ]
        for (text, path, query) in cases {
            let stream = MastodonStream(try #require(MastodonTimeline(text)))
            #expect(stream?.path == path, "\(text)")
            if path != nil { #expect(stream?.query == query, "\(text)") }
        }
    }

    @Test func announcedURLsBecomeHTTPAndTheTokenStaysOnTheServersOrigin() throws {
        #expect(MastodonStream.httpForm("wss://streaming.example.social")?.absoluteString == "https://streaming.example.social")
        #expect(MastodonStream.httpForm("ws://127.0.0.1:4000")?.absoluteString == "http://127.0.0.1:4000")
        for bad in ["ftp://x.example", "javascript:alert(1)", "wss://user:pw@x.example", "", "wss://"] {
            #expect(MastodonStream.httpForm(bad) == nil, "\(bad)")
        }
        // The stream's policy over Origin's one comparison: the server's origin, or a subdomain on the same scheme and port.
        let home = try #require(URL(string: "https://example.social"))
        let server = try #require(Origin(home))
        let table: [(String, Bool)] = [
            ("https://example.social", true), ("https://streaming.example.social", true), ("https://EXAMPLE.social:443", true),
            ("wss://streaming.example.social", false),      // not an http(s) URL: the stream asks in its https form
            ("https://EXAMPLE.social:4000", false), ("https://streaming.example.social:4000", false),   // another port
            ("http://streaming.example.social", false), ("http://example.social", false),           // down to plain http
            ("https://example.social.evil.example", false), ("https://notexample.social", false), ("https://social", false),
        ]
        for (url, allowed) in table {
            #expect(server.admits(try #require(URL(string: url)), subdomains: true) == allowed, "\(url)")
        }
    }

    @Test func updateDeleteAndEditEventsBecomeLiveEventsOthersAreIgnored() throws {
        var decoder = MastodonStreamDecoder(server: "example.social")
        let json = status("110000000000000009", #""content": "<p>hello</p>""#)
        guard case .upserted(let post, _)? = try decoder.decode(ServerSentEvent(type: "update", data: json)) else {
            Issue.record("update is an upsert")
            return
        }
        #expect(post.id == PostID("110000000000000009") && post.text == "hello")
        guard case .upserted(let edited, _)? = try decoder.decode(ServerSentEvent(type: "status.update", data: json)) else {
            Issue.record("status.update is an edit: its new version replaces the stored one")
            return
        }
        #expect(edited == post)
        #expect(try decoder.decode(ServerSentEvent(type: "delete", data: "110000000000000009")) == .deleted(PostID("110000000000000009")))
        for ignored in ["notification", "filters_changed", "conversation", "announcement", "message"] {
            #expect(try decoder.decode(ServerSentEvent(type: ignored, data: "{}")) == nil, "\(ignored)")
        }
    }

    @Test func aStatusThatCannotBeReadOrMappedIsSkippedWithItsReasonAsOnAPolledPage() throws {
        var decoder = MastodonStreamDecoder(server: "example.social")
        let cases: [(String, SkippedItem)] = [
            (status("110000000000000007", #""created_at": "yesterday""#),
             SkippedItem(id: "110000000000000007", reason: "created_at \"yesterday\" is not an ISO 8601 time", postID: "110000000000000007")),
            (status("110000000000000008", #""visibility": "secret""#),
             SkippedItem(id: "110000000000000008", reason: "visibility \"secret\" is not one Mastodon documents", postID: "110000000000000008")),
            (#"{"id": 5}"#, SkippedItem(id: nil, reason: "", postID: nil)),
        ]
        for (data, expected) in cases {
            for type in ["update", "status.update"] {
                guard case .skipped(let item)? = try decoder.decode(ServerSentEvent(type: type, data: data)) else {
                    Issue.record("\(type) \(data) is skipped")
                    continue
                }
                // A poll's page skips the same status with the same item.
                let polled = try MastodonTimelineResponse(body: Data("[\(data)]".utf8)).mapped().skipped
                #expect([item] == polled, "\(type) \(data)")
                #expect(item.id == expected.id && item.postID == expected.postID)
                if !expected.reason.isEmpty { #expect(item.reason == expected.reason) }
            }
        }
    }

    @Test func eventsThatAreNotWhatTheyClaimFailTheStream() {
        var decoder = MastodonStreamDecoder(server: "example.social")
        let bad = [ServerSentEvent(type: "update", data: "not json"), ServerSentEvent(type: "update", data: "[]"),
                   ServerSentEvent(type: "update", data: "5"), ServerSentEvent(type: "status.update", data: "{} {}"),
                   ServerSentEvent(type: "delete", data: ""), ServerSentEvent(type: "delete", data: "1 2"),
                   ServerSentEvent(type: "delete", data: "\u{1B}[31m"), ServerSentEvent(type: "delete", data: String(repeating: "9", count: 65))]
        for event in bad {
            #expect(throws: ServiceError.self, "\(event)") { try decoder.decode(event) }
        }
    }
}
