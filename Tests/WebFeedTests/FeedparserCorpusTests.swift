import Foundation
import Testing
@testable import WebFeed

/// The classes of failure `Benchmarks/compare_feedparser.py` found against feedparser's own test
/// feeds, each written here from the spec it breaks or follows.
@Suite struct FeedparserCorpusTests {
    let base = URL(string: "http://fixtures.example/feeds/x")

    func parse(_ text: String) throws -> WebFeedDocument {
        try WebFeedParser.parse(Data(text.utf8), feedURL: base)
    }

    /// Atom 0.3 (the draft many feeds still serve): its namespace, `issued`/`modified`/`created`,
    /// and `mode` on text.
    @Test func atom03IsReadAsAtom() throws {
        let document = try parse("""
            <?xml version="1.0"?>
            <feed version="0.3" xmlns="http://purl.org/atom/ns#">
              <title>Old Atom</title><link rel="alternate" type="text/html" href="http://example.org/"/>
              <entry><title>Escaped</title><link rel="alternate" type="text/html" href="http://example.org/1"/>
                <id>tag:example.org,2003:1</id><issued>2003-12-13T08:29:29-04:00</issued><modified>2003-12-13T18:30:02Z</modified>
                <content type="text/html" mode="escaped">&lt;p&gt;Hello &lt;b&gt;there&lt;/b&gt;&lt;/p&gt;</content></entry>
              <entry><title>Encoded</title><id>tag:example.org,2003:2</id><created>2003-12-12T08:00:00Z</created>
                <summary type="text/plain" mode="base64">SGVsbG8gYmFzZTY0</summary></entry>
              <entry><title>Inline</title><id>tag:example.org,2003:3</id><modified>2003-12-11T08:00:00Z</modified>
                <content type="application/xhtml+xml" mode="xml"><div xmlns="http://www.w3.org/1999/xhtml"><p>In <i>line</i></p></div></content></entry>
            </feed>
            """)
        #expect(document.title == "Old Atom" && document.link?.absoluteString == "http://example.org/")
        #expect(document.entries.map(\.title) == ["Escaped", "Encoded", "Inline"])
        let escaped = document.entries[0]
        #expect(escaped.id == "tag:example.org,2003:1" && escaped.link?.absoluteString == "http://example.org/1")
        #expect(escaped.published == Date(timeIntervalSince1970: 1_071_318_569) && escaped.updated == Date(timeIntervalSince1970: 1_071_340_202))
        #expect(escaped.html == "<p>Hello <b>there</b></p>")
        #expect(document.entries[1].plainText == "Hello base64" && document.entries[1].published == Date(timeIntervalSince1970: 1_071_216_000))
        #expect(document.entries[2].html == "<p>In <i>line</i></p>")
    }

    /// Atom 1.0 content of a media type that is neither text nor XML is base64 (RFC 4287
    /// §4.1.3.3): text is decoded, anything else is not taken for text.
    @Test func atomBase64ContentIsDecodedWhenItIsText() throws {
        let document = try parse("""
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>1</id>
            <title type="application/octet-stream">RXhhbXBsZSA8Yj5BdG9tPC9iPg==</title>
            <content type="image/png">iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==</content>
            </entry></feed>
            """)
        #expect(document.entries.first?.title == "Example <b>Atom</b>", "a title of an odd type is text once decoded")
        #expect(document.entries.first?.plainText == nil && document.entries.first?.html == nil, "a PNG is not text")
    }

    /// Atom that forgot its namespace, and the names Atom's 2003 drafts went by.
    @Test func atomWithoutItsNamespaceIsStillAtom() throws {
        let bare = try parse(#"<feed><title>Bare</title><entry><id>1</id><title>One</title><updated>2024-01-02T03:04:05Z</updated></entry></feed>"#)
        #expect(bare.title == "Bare" && bare.entries.map(\.title) == ["One"] && bare.entries.first?.updated == Date(timeIntervalSince1970: 1_704_164_645))
        let echo = try parse(#"<feed version="0.3" xmlns="http://purl.org/echo/"><title>Echo</title><entry><title>E</title></entry></feed>"#)
        #expect(echo.title == "Echo" && echo.entries.count == 1)
        #expect(throws: WebFeedParseError.self) { try parse(#"<feed xmlns="http://example.org/other"><entry/></feed>"#) }
    }

    /// Markup a feed forgot to escape in a text element is kept, not dropped with its text.
    @Test func unescapedMarkupInTextElementsIsKept() throws {
        let atom = try parse(#"<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>1</id><title>Example <b>Atom</b> here</title></entry></feed>"#)
        #expect(atom.entries.first?.title == "Example Atom here")
        let rss = try parse(#"<rss version="2.0"><channel><item><guid>1</guid><title>T</title><description>Intro <p>One <a href="/x">link</a></p> end</description></item></channel></rss>"#)
        #expect(rss.entries.first?.html == #"Intro <p>One <a href="http://fixtures.example/x">link</a></p> end"#)
        #expect(rss.entries.first?.title == "T", "the title after it is read as before")
        let media = try parse(#"<rss xmlns:media="http://search.yahoo.com/mrss/"><channel><item><guid>m</guid><media:title>bar</media:title></item></channel></rss>"#)
        let post = WebFeedMapping.changes(media, firstSeen: [:], now: Date()).posts.first
        #expect(post?.title == "bar", "media:title stands in for a missing title")
    }

    /// RSS 0.90 (Netscape's namespace) and RSS 2.0 with the namespace some feeds declare.
    @Test func rss090AndNamespacedRSS2AreRead() throws {
        let rss090 = try parse("""
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://my.netscape.com/rdf/simple/0.9/">
            <channel><title>Ninety</title><link>http://example.org/</link></channel>
            <item><title>One</title><link>http://example.org/1</link></item></rdf:RDF>
            """)
        #expect(rss090.title == "Ninety" && rss090.entries.map(\.link?.absoluteString) == ["http://example.org/1"])
        let namespaced = try parse("""
            <rss version="2.0" xmlns="http://backend.userland.com/rss2"><channel><title>Two</title>
            <item><title>A</title><guid>a</guid></item></channel></rss>
            """)
        #expect(namespaced.title == "Two" && namespaced.entries.map(\.id) == ["a"])
    }

    /// A channel `itunes:image` without a usable `href` once crashed the parse (an overlapping
    /// read and write of the document); it is now ignored.
    @Test func aChannelImageWithoutAnHrefIsIgnored() throws {
        let document = try parse("""
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>P</title>
            <itunes:image href="https://example.org/show.jpg"/><itunes:image/><itunes:image href="javascript:x"/>
            <item><title>E</title><guid>e</guid></item></channel></rss>
            """)
        #expect(document.podcastImage?.absoluteString == "https://example.org/show.jpg")
    }

    /// UTF-32 without a byte-order mark and EBCDIC are told by how `<?xm` is written (XML 1.0
    /// appendix F); Python's spellings of encoding names (`windows_1251`) are iconv's names.
    @Test func encodingsToldByTheirFirstBytesAndPythonNames() throws {
        let xml = "<?xml version=\"1.0\" encoding=\"%@\"?><rss version=\"2.0\"><channel><title>Café ÿ</title></channel></rss>"
        let utf32 = xml.replacingOccurrences(of: "%@", with: "utf-32le")
        #expect(try WebFeedParser.parse(utf32.data(using: .utf32LittleEndian)!, feedURL: base).title == "Café ÿ")
        let cyrillic = "<?xml version=\"1.0\" encoding=\"windows_1251\"?><rss version=\"2.0\"><channel><title>Новости</title></channel></rss>"
        #expect(try WebFeedParser.parse(FeedEncodingTestData.encode(cyrillic, as: "WINDOWS-1251"), feedURL: base).title == "Новости")
        // XML forbids a name that starts with a digit; the converted document says UTF-8 instead.
        let dos = xml.replacingOccurrences(of: "%@", with: "437")
        #expect(try WebFeedParser.parse(FeedEncodingTestData.encode(dos, as: "CP437"), feedURL: base).title == "Café ÿ")
        let ebcdic = xml.replacingOccurrences(of: "%@", with: "cp037")
        #expect(try WebFeedParser.parse(FeedEncodingTestData.encode(ebcdic, as: "IBM037"), feedURL: base).title == "Café ÿ")
    }
}

/// Text in a legacy encoding, made with iconv as a test needs it.
enum FeedEncodingTestData {
    static func encode(_ text: String, as encoding: String) -> Data {
        let converter = iconv_open(encoding, "UTF-8")!
        defer { iconv_close(converter) }
        var input = Array(text.utf8).map { CChar(bitPattern: $0) }
        var output = [CChar](repeating: 0, count: input.count * 4 + 16)
        var inLeft = input.count, outLeft = output.count
        input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer: UnsafeMutablePointer<CChar>? = inBuffer.baseAddress
                var outPointer: UnsafeMutablePointer<CChar>? = outBuffer.baseAddress
                _ = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
            }
        }
        return Data(output.prefix(output.count - outLeft).map { UInt8(bitPattern: $0) })
    }
}
