import Foundation
import IntegrationKit
import ProcessTestSupport
import Testing

/// One case of the shared table, `HTMLTextCases.json`, which Mastodon's and web feeds' tests
/// also run through their own mappings.
struct HTMLTextCase: Decodable, CustomTestStringConvertible {
    var html: String
    var text: String?
    var collapsed: String?
    var preserved: String?
    var why: String

    /// The text expected with `whiteSpace`.
    func expected(_ whiteSpace: HTMLText.Options.WhiteSpace) -> String {
        text ?? (whiteSpace == .collapse ? collapsed : preserved) ?? ""
    }

    var testDescription: String { "\(why): \(html.debugDescription)" }

    static let all: [HTMLTextCase] = {
        struct Table: Decodable { var cases: [HTMLTextCase] }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("HTMLTextCases.json")
        return try! JSONDecoder().decode(Table.self, from: Data(contentsOf: url)).cases
    }()
}

/// The one HTML renderer: the shared table with each white-space option, then what no input
/// may make it do.
@Suite struct HTMLTextTests {
    @Test(arguments: HTMLTextCase.all)
    func rendersTheTable(_ row: HTMLTextCase) {
        #expect(HTMLText.plainText(row.html) == row.expected(.collapse), "collapsed")
        #expect(HTMLText.plainText(row.html, HTMLText.Options(whiteSpace: .preserve)) == row.expected(.preserve), "preserved")
    }

    /// Not in the shared table: the integrations' JSON readers turn `\u0000` into U+FFFD before
    /// the renderer sees it.
    @Test func aNULIsDropped() {
        #expect(HTMLText.plainText("x\u{0}y") == "xy" && HTMLText.plainText("x\u{0}y", HTMLText.Options(whiteSpace: .preserve)) == "xy")
    }

    @Test func theTableCoversEachRuleOnce() {
        #expect(HTMLTextCase.all.count >= 40)
        #expect(Set(HTMLTextCase.all.map(\.html)).count == HTMLTextCase.all.count, "no case twice")
        #expect(HTMLTextCase.all.allSatisfy { ($0.text == nil) == ($0.collapsed != nil && $0.preserved != nil) })
    }

    /// Random markup from the pieces that matter: never a NUL or white space at either end, never
    /// longer than the bound the output buffer is sized by, and (collapsed) never two spaces.
    @Test func randomMarkupStaysWithinItsBounds() {
        let pieces = ["<p>", "</p>", "<br>", "</br>", "<li>", "</li>", "<hr>", "<script>", "</script>", "<style>", "<!--", "-->", "<!", "<?",
                      "</", "<a href=\"", "'", "\"", "=", ">", "<", "&", ";", "#", "x", "&amp;", "&nGt;", "&#", "&#x", "1F600", "&not",
                      "&#0;", "&#150", "&#13;", "&#10;", " ", "  ", "\t", "\n", "\r", "\r\n", "\u{0}", "\u{A0}", "\u{2028}", "é", "🚀", "p", "br"]
        var random = SeededRandom(seed: 0x5EED)
        for _ in 0..<5_000 {
            let html = (0..<Int(random.next() % 16)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            for whiteSpace in [HTMLText.Options.WhiteSpace.collapse, .preserve] {
                let text = HTMLText.plainText(html, HTMLText.Options(whiteSpace: whiteSpace))
                #expect(!text.unicodeScalars.contains("\u{0}"), "\(html.debugDescription)")
                #expect(text.unicodeScalars.first.map(HTMLText.isWhiteSpace) != true && text.unicodeScalars.last.map(HTMLText.isWhiteSpace) != true,
                        "\(html.debugDescription)")
                #expect(text.utf8.count <= html.utf8.count + html.utf8.count / 5 + 8, "\(html.debugDescription)")
                if whiteSpace == .collapse { #expect(!text.contains("  ") && !text.contains(" \n"), "\(html.debugDescription)") }
            }
        }
    }

    @Test func whiteSpaceIsUnicodesWhiteSpaceProperty() {
        for value in 0...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            if HTMLText.isWhiteSpace(scalar) != scalar.properties.isWhitespace { Issue.record("U+\(String(value, radix: 16))") }
        }
    }

    @Test func escapeWritesTheFourReferences() {
        #expect(HTMLText.escape("a & <b> \"c\" 'd' é") == "a &amp; &lt;b&gt; &quot;c&quot; 'd' é")
        #expect(HTMLText.plainText(HTMLText.escape("x < y & \"z\"")) == "x < y & \"z\"")
    }
}

/// SplitMix64: the same numbers on every run.
