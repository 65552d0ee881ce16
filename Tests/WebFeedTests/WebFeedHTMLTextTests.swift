import Core
import Foundation
import IntegrationKit
import Testing
@testable import WebFeed

/// IntegrationKit's shared table (`Tests/IntegrationKitTests/HTMLTextCases.json`) through a web
/// feed: each case a JSON Feed item's `content_html`, parsed and mapped to a post.
@Suite struct WebFeedHTMLTextTests {
    struct Case: Decodable {
        var html: String
        var text: String?
        var collapsed: String?
    }

    @Test func theSharedTableMapsThroughAFeedItem() throws {
        struct Table: Decodable { var cases: [Case] }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("IntegrationKitTests/HTMLTextCases.json")
        let cases = try JSONDecoder().decode(Table.self, from: Data(contentsOf: url)).cases
        #expect(cases.count >= 40)
        let items = cases.enumerated().map { index, row in ["id": "case-\(index)", "title": "Case \(index)", "content_html": row.html] }
        let feed = try JSONSerialization.data(withJSONObject: ["version": "https://jsonfeed.org/version/1.1", "title": "Table", "items": items])
        let document = try WebFeedParser.parse(feed, feedURL: URL(string: "https://feeds.example/table.json"))
        let posts = WebFeedMapping.changes(document, firstSeen: [:], now: Date(timeIntervalSince1970: 1_800_000_000)).posts
        let texts = Dictionary(uniqueKeysWithValues: posts.map { ($0.id.rawValue, $0.text) })
        #expect(texts.count == cases.count)
        for (index, row) in cases.enumerated() {
            #expect(texts["case-\(index)"] == row.text ?? row.collapsed, "\(row.html.debugDescription)")
        }
    }
}
