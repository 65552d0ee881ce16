import Core
import Foundation
import IntegrationKit
@testable import Mastodon
import ProcessTestSupport
import Testing

/// One case of IntegrationKit's shared table (`Tests/IntegrationKitTests/HTMLTextCases.json`).
struct SharedHTMLCase: Decodable, CustomTestStringConvertible {
    var html: String
    var text: String?
    var preserved: String?
    var why: String
    var testDescription: String { "\(why): \(html.debugDescription)" }

    static let all: [SharedHTMLCase] = {
        struct Table: Decodable { var cases: [SharedHTMLCase] }
        let url = fixtures.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tests/IntegrationKitTests/HTMLTextCases.json")
        return try! JSONDecoder().decode(Table.self, from: Data(contentsOf: url)).cases
    }()
}

/// A status's HTML as text: the shared table through a status's content and the mapping, then
/// how the one renderer differs from the one Mastodon had (`LegacyCodablePage.plainText`).
@Suite struct MastodonHTMLTests {
    @Test(arguments: SharedHTMLCase.all)
    func theSharedTableMapsThroughAStatus(_ row: SharedHTMLCase) throws {
        let content = String(decoding: try JSONSerialization.data(withJSONObject: row.html, options: .fragmentsAllowed), as: UTF8.self)
        let mapped = try mapPage(page([status("7", "\"content\": \(content)")]))
        #expect(mapped.posts.map(\.text) == [row.text ?? row.preserved ?? ""])
    }

    /// Where the one renderer reads a status otherwise than Mastodon's own did, each decided by
    /// the HTML standard or taken from web feeds' rules: (HTML, before, now).
    static let changes: [(String, String, String)] = [
        ("<p>a</p><p></p><p>b</p>", "a\n\n\n\nb", "a\n\nb"), ("<p>a<br></p><p>b</p>", "a\n\n\nb", "a\n\nb"), ("<p>a</p>b", "ab", "a\n\nb"),
        ("<p>a</p><ul><li>x</li><li>y</li></ul>", "axy", "a\n\n• x\n\n• y"), ("<blockquote>q</blockquote>t", "qt", "q\n\nt"),
        ("&eacute; &hellip; &amp &copy 2026", "&eacute; &hellip; &amp &copy 2026", "é … & © 2026"), ("&#150;", "\u{96}", "–"),
        ("&#+65;", "A", "&#+65;"), ("a<brx>b", "a\nb", "ab"), ("a <3 b > c", "a  c", "a <3 b > c"), ("x <unclosed", "x <unclosed", "x"),
        ("a\r\nb", "a\r\nb", "a\nb"), ("\u{200B}x", "x", "\u{200B}x"), ("a\u{0}b", "a\u{0}b", "ab"), ("<a title=\"1>2\">x</a>", "2\">x", "x"),
        ("<!-- a > b -->c", "b -->c", "c"),
    ]

    @Test func whereTheRendererChangedStatusesText() {
        for (html, before, now) in Self.changes {
            #expect(LegacyCodablePage.plainText(html) == before, "\(html.debugDescription)")
            #expect(HTMLText.plainText(html, .mastodon) == now, "\(html.debugDescription)")
        }
    }

    /// Statuses as Mastodon writes them (paragraphs of text, links, mentions, line breaks inside
    /// a paragraph, the common references) read exactly as before.
    @Test func statusesAsMastodonWritesThemReadAsBefore() {
        let inline = ["<a href=\"https://x.example/\">", "</a>", "<span class=\"invisible\">", "</span>", "&amp;", "&lt;", "&gt;", "&quot;",
                      "&#39;", "&#x1F600;", "&nbsp;", "x", " ", "word", "é", "東", "🚀", "\u{A0}"]
        var random = SeededRandom(state: 0xC0FFEE)
        for _ in 0..<2_000 {
            let paragraphs = (0..<(1 + Int(random.next() % 3))).map { _ in
                var pieces = (0..<Int(random.next() % 6)).map { _ in inline[Int(random.next() % UInt64(inline.count))] }
                if random.next() % 3 == 0 { pieces.insert("<br>", at: Int(random.next() % UInt64(pieces.count + 1))) }
                return "<p>" + pieces.joined() + "text</p>"
            }
            let html = paragraphs.joined()
            #expect(HTMLText.plainText(html, .mastodon) == LegacyCodablePage.plainText(html), "\(html.debugDescription)")
        }
    }
}
