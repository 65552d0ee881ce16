import Foundation
import Testing
@testable import WebFeed

/// Hostile XML from the XML 1.0 spec's own constructs (§2.8 prolog and DOCTYPE, §4.1 references,
/// §4.2 entity declarations, internal and external, general and parameter), placed where a
/// prefix scan does not look, and documents past libxml2's single-chunk limit. Each goes through
/// the public entry points (`WebFeedParser.parse`, `OPML.subscriptions`), as a sync does.
@Suite struct HostileXMLTests {
    let base = URL(string: "http://fixtures.example/feeds/x")

    /// A comment long enough that the declarations after it lie past the first 64 KiB.
    static let longComment = "<!--" + String(repeating: "padding ", count: 70_000 / 8) + "-->\n"

    static func rss(_ prolog: String, title: String) -> Data {
        Data(("<?xml version=\"1.0\"?>\n" + longComment + prolog
              + "\n<rss version=\"2.0\"><channel><title>feed</title><item><guid>1</guid><title>\(title)</title></item></channel></rss>").utf8)
    }

    func refusal(_ data: Data) throws -> WebFeedParseError {
        try #require(throws: WebFeedParseError.self) { try WebFeedParser.parse(data, feedURL: base) }
    }

    @Test func anEntityDeclaredAfterALongCommentIsRefused() throws {
        // XML 1.0 §2.8: comments may precede the DOCTYPE; §4.2.1 an internal general entity.
        let error = try refusal(Self.rss("<!DOCTYPE rss [<!ENTITY a \"EXPANDED\">]>", title: "a &a; b"))
        #expect(error.reason.contains("declares the XML entity \"a\""), "\(error)")
        #expect(error.line != nil && error.column != nil, "\(error)")
    }

    @Test func theRefusalReadsAsTheREADMEShowsIt() throws {
        let feed = "<?xml version=\"1.0\"?>\n<!-- a comment -->\n<!DOCTYPE rss [<!ENTITY a \"x\">]>\n<rss version=\"2.0\"/>"
        let error = try refusal(Data(feed.utf8))
        #expect(error.description == "line 3, column 30: the document declares the XML entity \"a\"; feedsync reads no document that declares entities")
    }

    @Test func parameterEntitiesAreRefused() throws {
        // §4.1 [69] PEReference, §4.2 [72] PEDecl: a parameter entity that declares a general one.
        let error = try refusal(Self.rss("<!DOCTYPE rss [<!ENTITY % p \"<!ENTITY a 'EXPANDED'>\"> %p;]>", title: "a &a; b"))
        #expect(error.reason.contains("declares the XML entity \"p\""), "\(error)")
    }

    @Test func externalEntitiesAreRefusedAndAnExternalSubsetIsNeverRead() throws {
        // §4.2.2 external entities: declared in the internal subset, refused at the declaration.
        let error = try refusal(Self.rss("<!DOCTYPE rss [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>", title: "a &x; b"))
        #expect(error.reason.contains("declares the XML entity \"x\""), "\(error)")

        // §2.8 [75] ExternalID: a DTD on disk that declares an entity is not loaded, so its
        // reference stays as written instead of turning into the file's text.
        let dtd = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-evil-\(getpid()).dtd")
        try Data("<!ENTITY evil \"EXPANDED\">".utf8).write(to: dtd)
        defer { try? FileManager.default.removeItem(at: dtd) }
        let document = try WebFeedParser.parse(Self.rss("<!DOCTYPE rss SYSTEM \"\(dtd.path)\">", title: "a &evil; b"), feedURL: base)
        #expect(document.entries.first?.title == "a &evil; b")
    }

    @Test func billionLaughsAfterALongCommentIsRefused() throws {
        // Six levels of ten: a million copies if expanded (the old code expanded it and stored them).
        var declarations = "<!ENTITY l0 \"ha\">"
        for level in 1...6 { declarations += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">" }
        let error = try refusal(Self.rss("<!DOCTYPE rss [\(declarations)]>", title: "&l6;"))
        #expect(error.reason.contains("declares the XML entity \"l0\""), "\(error)")
    }

    @Test func opmlGetsTheSameRefusal() throws {
        let opml = "<?xml version=\"1.0\"?>\n" + Self.longComment + "<!DOCTYPE opml [<!ENTITY a \"x\">]>"
            + "<opml version=\"2.0\"><body><outline text=\"a &a;\" xmlUrl=\"https://example.org/feed\"/></body></opml>"
        let error = try #require(throws: OPML.ReadError.self) { try OPML.subscriptions(in: Data(opml.utf8)) }
        #expect(error.description.contains("declares the XML entity \"a\""), "\(error)")
    }

    @Test func referencesAreNeverDropped() throws {
        // XML's five and character references as XML says; HTML's named characters as characters
        // (feeds write them without a DTD); any other name kept as written, in text and attributes.
        let feed = "<rss version=\"2.0\"><channel><item><guid>1</guid><title>a &amp; &lt;b&gt; &#233;&#x20AC; &eacute;&nbsp;x &foo; z</title>"
            + "<enclosure url=\"https://example.org/a?x=1&amp;y=&eacute;&amp;z=&foo;\" type=\"audio/mpeg\" length=\"1\"/></item></channel></rss>"
        let entry = try #require(try WebFeedParser.parse(Data(feed.utf8), feedURL: base).entries.first)
        #expect(entry.title == "a & <b> é€ é x &foo; z", "no-break space collapses in a title like any space")
        #expect(entry.enclosures.first?.url.absoluteString == "https://example.org/a?x=1&y=%C3%A9&z=&foo;")
    }

    @Test func aFeedOverTenMillionBytesIsRead() throws {
        // 12 MB of items (libxml2 refuses more than 10,000,000 bytes handed over at once). The
        // bulk is in an element no field reads, so the test costs the parse, not text cleaning.
        var feed = "<?xml version=\"1.0\"?><rss version=\"2.0\" xmlns:x=\"urn:x\"><channel><title>big</title>"
        let filler = String(repeating: "Some words nobody reads. ", count: 240)
        var count = 0
        while feed.utf8.count < 12_000_000 {
            feed += "<item><guid>g\(count)</guid><title>Item \(count)</title><x:filler>\(filler)</x:filler></item>\n"
            count += 1
        }
        feed += "</channel></rss>"
        let document = try WebFeedParser.parse(Data(feed.utf8), feedURL: base)
        #expect(document.entries.count == count)
        #expect(document.entries.last?.title == "Item \(count - 1)")

        // One CDATA section and one attribute value of 10.5 MB each (libxml2's "huge input lookup").
        let huge = String(repeating: "x", count: 10_500_000)
        let cdata = "<rss version=\"2.0\"><channel><item><guid>1</guid><x><![CDATA[\(huge)]]></x></item><item x=\"\(huge)\"><guid>2</guid></item></channel></rss>"
        let single = try WebFeedParser.parse(Data(cdata.utf8), feedURL: base)
        #expect(single.entries.map(\.id) == ["1", "2"])
    }

    @Test func anOPMLFileOf100000OutlinesIsRead() throws {
        var opml = "<?xml version=\"1.0\"?><opml version=\"2.0\"><head><title>many</title></head><body>"
        for index in 0..<100_000 {
            opml += "<outline type=\"rss\" text=\"Feed number \(index)\" title=\"Feed number \(index)\" xmlUrl=\"https://feeds.example.org/\(index)/rss.xml\"/>\n"
        }
        opml += "</body></opml>"
        #expect(opml.utf8.count > 10_000_000)
        let subscriptions = try OPML.subscriptions(in: Data(opml.utf8))
        #expect(subscriptions.count == 100_000)
        #expect(subscriptions.last?.url.absoluteString == "https://feeds.example.org/99999/rss.xml")
    }

    @Test func anOutlineWithOnlyASiteIsThatPageToDiscoverItsFeedOn() throws {
        let opml = """
            <opml version="1.0"><body><outline text="Folder">
            <outline text="Feed" xmlUrl="https://a.example/feed" htmlUrl="https://a.example/"/>
            <outline title="Site" text="x" htmlUrl="https://b.example/blog/"/>
            <outline text="Bad feed" xmlUrl="ftp://c.example/feed" htmlUrl="https://c.example/"/>
            <outline text="Nothing" htmlUrl="javascript:alert(1)"/>
            </outline></body></opml>
            """
        let subscriptions = try OPML.subscriptions(in: Data(opml.utf8))
        #expect(subscriptions.map { "\($0.title ?? "-") \($0.url.absoluteString) \($0.isSite)" }
                == ["Feed https://a.example/feed false", "Site https://b.example/blog/ true"],
                "an outline whose xmlUrl is unusable is not taken for its site")
    }

    @Test func errorsAreSentencesWithLineAndColumn() throws {
        let broken = ["<rss><channel></rss>", "<rss><channel><title>x</title>", "<rss a=\"1\" a=\"2\"/>", "<rss><a b=c/></rss>",
                      "<rss>\u{1}</rss>", "<rss><channel></channel></rss><rss/>", "<rss><t>a & b</t></rss>", "<rss><t>x</t </rss>"]
        for text in broken {
            let error = try refusal(Data(text.utf8))
            #expect(error.line != nil && error.column != nil, "\(text): \(error)")
            #expect(error.description.firstMatch(of: /[Ee]rror \d/) == nil, "\(text): \(error)")
            #expect(error.reason.hasPrefix("the feed is not well-formed XML ("), "\(text): \(error)")
        }
    }

    @Test func anElementWithTooManyAttributesIsRefusedBeforeItIsRead() throws {
        // libxml2's duplicate-attribute check is quadratic: 100,000 attributes cost seconds.
        let attributes = (0...10_000).map { "a\($0)=\"\"" }.joined(separator: " ")
        let error = try refusal(Data("<rss version=\"2.0\"><channel \(attributes)/></rss>".utf8))
        #expect(error.reason.contains("more than 10000 attributes"), "\(error)")
        // Attributes in text or comments are not counted.
        let quoted = String(repeating: "a=\"1\" ", count: 20_000)
        let fine = "<rss version=\"2.0\"><!-- <x \(quoted)> --><channel><description>&lt;x \(quoted)&gt;</description></channel></rss>"
        #expect(throws: Never.self) { try WebFeedParser.parse(Data(fine.utf8), feedURL: base) }
    }

    @Test func aCancelledSyncDoesNotParse() async throws {
        let data = Self.rss("", title: "x")
        let outcome = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return Result { try WebFeedParser.parse(data, feedURL: base) }
        }.value
        #expect(throws: CancellationError.self) { try outcome.get() }
    }
}
