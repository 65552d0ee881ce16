import Foundation
import Testing
@testable import WebFeed

/// JSON Feed as publishers write it, beyond the spec's examples.
@Suite struct JSONFeedTests {
    let base = URL(string: "http://fixtures.example/feeds/x")

    @Test func anHTTPVersionURLIsAJSONFeed() throws {
        // WordPress plugins write the version with http://.
        for version in ["http://jsonfeed.org/version/1", "https://jsonfeed.org/version/1.1", "http://jsonfeed.org/version/1.1"] {
            let json = "{\"version\": \"\(version)\", \"title\": \"T\", \"items\": [{\"id\": \"a\", \"content_text\": \"x\"}]}"
            let document = try WebFeedParser.parse(Data(json.utf8), feedURL: base)
            #expect(document.entries.map(\.id) == ["a"], "\(version)")
        }
        for version in ["https://example.org/version/1", "jsonfeed.org/version/1", "ftp://jsonfeed.org/version/1"] {
            let json = "{\"version\": \"\(version)\", \"items\": []}"
            #expect(throws: WebFeedParseError.self, "\(version)") { try WebFeedParser.parse(Data(json.utf8), feedURL: base) }
        }
    }

    @Test func aFieldOfTheWrongTypeIsIgnoredNotFatal() throws {
        let json = """
        {"items": [{"id": 7, "title": ["not", "a", "string"], "url": "/p/7", "tags": ["a", 3, "b"],
                    "attachments": [{"url": "/a.mp3", "mime_type": "audio/mpeg", "size_in_bytes": "big"}, 5]},
                   "not an item"],
         "authors": {"name": "not a list"}, "feed_url": "https://json.example.com/feed.json",
         "version": "https://jsonfeed.org/version/1.1"}
        """
        let document = try WebFeedParser.parse(Data(json.utf8), feedURL: base)
        let entry = try #require(document.entries.first)
        #expect(document.entries.count == 1)
        #expect(entry.id == "7" && entry.title == nil && entry.categories == ["a", "b"])
        #expect(entry.link?.absoluteString == "https://json.example.com/p/7", "resolved against feed_url, which came later")
        #expect(entry.enclosures.map { "\($0.url.absoluteString) \($0.length.map(String.init) ?? "-")" } == ["https://json.example.com/a.mp3 -"])
        let error = try #require(throws: WebFeedParseError.self) { try WebFeedParser.parse(Data("{\"version\": 1,".utf8), feedURL: base) }
        #expect(error.reason.hasPrefix("the feed is not valid JSON ("), "\(error)")
    }
}
