import Core
import Foundation
import Synchronization
import Testing
@testable import WebFeed

/// Feeds as people meet them (Fixtures/webfeed/make_variety_fixtures.py): one document per
/// encoding family, and each class of not-well-formed XML other readers recover.
@Suite struct WebFeedVarietyTests {
    let base = URL(string: "http://fixtures.example/feeds/x")

    static let encodings: [(String, String, String)] = [
        ("gb2312.xml", "中文新闻", "北京今天天气晴朗"), ("gbk.xml", "繁體與简体", "镕基说话"), ("gb18030.xml", "中文新闻", "𠀀 与 €"),
        ("big5.xml", "台灣新聞", "今天天氣晴朗"), ("shift_jis.xml", "日本のニュース", "東京は晴れです"),
        ("euc-jp.xml", "日本のニュース", "大阪は雨です"), ("iso-2022-jp.xml", "日本のニュース", "京都は曇りです"),
        ("euc-kr.xml", "한국 뉴스", "서울은 맑음"), ("koi8-r.xml", "Новости", "В Москве солнечно"), ("koi8-u.xml", "Новини", "У Києві ґрунт"),
        ("windows-1251.xml", "Новости", "Погода в Софии"), ("windows-1250.xml", "Zprávy", "Příliš žluťoučký kůň"),
        ("windows-1253.xml", "Ειδήσεις", "Καλημέρα"), ("windows-1254.xml", "Haberler", "Çağrı ışık"),
        ("windows-1255.xml", "חדשות", "שלום עולם"), ("windows-1256.xml", "أخبار", "مرحبا بالعالم"),
        ("windows-1257.xml", "Naujienos", "Ąčęėįšųūž"), ("windows-1258.xml", "Cà phê", "Đêm và bơ"),
        ("iso-8859-2.xml", "Wiadomości", "Zażółć gęślą jaźń"), ("iso-8859-5.xml", "Новости", "Привет"),
        ("iso-8859-7.xml", "Ειδήσεις", "Η Αθήνα σήμερα"), ("iso-8859-9.xml", "Haberler", "İstanbul'da güneş"),
        ("iso-8859-15.xml", "Nouvelles", "Œuvre à 5 €"), ("iso-8859-16.xml", "Știri", "Țară și oraș"),
        ("macroman.xml", "Café", "Crème brûlée ™"), ("utf-16be-bom.xml", "UTF-16 big-endian", "Grüße 日本"),
    ]

    @Test(arguments: encodings)
    func everyEncodingFamilyIsRead(_ file: String, _ title: String, _ item: String) throws {
        let document = try WebFeedParser.parse(try fixture("encodings/\(file)"), feedURL: base)
        #expect(document.title == title, "\(file)")
        #expect(document.entries.first?.title == item, "\(file)")
        #expect(document.notes.isEmpty, "\(file): \(document.notes)")
    }

    @Test func utf8DeclaredButWindows1252FallsBackWithANote() throws {
        let document = try WebFeedParser.parse(try fixture("encodings/utf8-declared-windows1252.xml"), feedURL: base)
        #expect(document.title == "Notícias" && document.entries.first?.title == "Ação “rápida” – já")
        #expect(document.notes == ["the document is declared UTF-8 but is not valid UTF-8; it was read as windows-1252"])
    }

    @Test func theHTTPCharsetComesBeforeTheDeclarationAndAfterTheBOM() throws {
        let greek = try fixture("encodings/http-charset-greek.xml")
        let document = try WebFeedParser.parse(greek, feedURL: base, contentType: "text/xml; charset=\"ISO-8859-7\"")
        #expect(document.entries.first?.title == "Καλημέρα Ελλάδα")
        // The BOM outranks the HTTP charset.
        let bom = try WebFeedParser.parse(try fixture("encodings/utf-16be-bom.xml"), feedURL: base, contentType: "text/xml; charset=koi8-r")
        #expect(bom.entries.first?.title == "Grüße 日本")
        // A server's Latin-1 default yields to a document that says UTF-8 and is.
        let utf8 = Data("<?xml version=\"1.0\" encoding=\"utf-8\"?><rss><channel><item><title>Grüße</title></item></channel></rss>".utf8)
        #expect(try WebFeedParser.parse(utf8, feedURL: base, contentType: "text/xml; charset=ISO-8859-1").entries.first?.title == "Grüße")
        // An HTML meta charset, when nothing else says.
        let meta = Data("<rss><!-- <meta charset=\"koi8-r\"> --><channel><item><title>\u{EE}\u{CF}\u{D7}</title></item></channel></rss>".unicodeScalars.map { UInt8($0.value) })
        #expect(try WebFeedParser.parse(meta, feedURL: base).entries.first?.title == "Нов")
    }

    @Test func anUnknownEncodingIsOneSentence() throws {
        let error = try #require(throws: WebFeedParseError.self) {
            try WebFeedParser.parse(try fixture("encodings/unknown-encoding.xml"), feedURL: base)
        }
        #expect(error.description == "the document is in \"x-no-such-encoding\", an encoding feedsync does not know")
    }

    @Test func bytesOutsideTheEncodingBecomeReplacementCharactersWithANote() throws {
        // 0x80 0x20 is no Shift_JIS character.
        var data = Data("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><rss><channel><item><title>a".utf8)
        data.append(contentsOf: [0x80, 0x20])
        data.append(contentsOf: Array("b</title></item></channel></rss>".utf8))
        let document = try WebFeedParser.parse(data, feedURL: base)
        #expect(document.entries.first?.title == "a\u{FFFD} b")
        #expect(document.notes == ["1 bytes are not Shift_JIS and were read as U+FFFD"])
    }

    static let recovered: [(String, [String])] = [
        ("whitespace-before-declaration.xml", ["First"]), ("bare-ampersand.xml", ["Fish & Chips", "AT&T; R&D"]),
        ("html-entities.xml", ["Café crème — © 2026"]), ("truncated.xml", ["First", "Second"]),
        ("control-characters.xml", ["Bell and tabs"]),
    ]

    @Test(arguments: recovered)
    func readableDocumentsAreRecoveredWithOneNote(_ file: String, _ titles: [String]) throws {
        let document = try WebFeedParser.parse(try fixture("recovery/\(file)"), feedURL: base)
        #expect(document.entries.map(\.title) == titles.map(Optional.some), "\(file)")
        #expect(document.notes.count <= 1, "\(file): \(document.notes)")
    }

    @Test func anUndeclaredPrefixGetsItsUsualNamespace() throws {
        let document = try WebFeedParser.parse(try fixture("recovery/undeclared-prefix.xml"), feedURL: base)
        #expect(document.entries.first?.authors.map(\.name) == ["Ann Author"], "dc:creator without xmlns:dc")
        #expect(document.notes == ["line 3: the prefix \"dc\" is used without being declared; it was read with recovery"])
    }

    @Test func recoveryKeepsEveryRefusal() throws {
        // Not well-formed and declaring entities: the recovering parse refuses the declaration too.
        let feed = "  <?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY a \"x\">]><rss><channel><item><title>&a; & b</title></item></channel></rss>"
        let error = try #require(throws: WebFeedParseError.self) { try WebFeedParser.parse(Data(feed.utf8), feedURL: base) }
        #expect(error.description.contains("declares the XML entity \"a\"") || error.isWellFormedness, "\(error)")
        let document = try? WebFeedParser.parse(Data(feed.utf8), feedURL: base)
        #expect(document == nil)
    }

    @Test func discoveryFindsFeedLinksInDocumentOrderResolved() throws {
        let page = """
        <!doctype html><html><head><base href="https://cdn.example.org/blog/">
        <link rel="stylesheet" type="text/css" href="s.css">
        <LINK REL="Alternate" TYPE="application/atom+xml" HREF="atom.xml?a=1&amp;b=2">
        <link rel=alternate type=application/rss+xml href=/rss>
        <link rel="alternate nofollow" type="application/feed+json; charset=utf-8" href='//json.example.org/feed.json'>
        <link rel="alternate" type="text/html" href="other.html"><link rel="alternate" type="application/rss+xml" href="javascript:x">
        """
        let links = FeedDiscovery.feedLinks(in: Data(page.utf8), pageURL: URL(string: "https://example.org/")!)
        #expect(links.map(\.absoluteString) == ["https://cdn.example.org/blog/atom.xml?a=1&b=2", "https://cdn.example.org/rss",
                                                "https://json.example.org/feed.json"])
        #expect(FeedDiscovery.isHTML(Data(page.utf8), contentType: nil))
        #expect(FeedDiscovery.isHTML(Data("<p>hi".utf8), contentType: "text/html; charset=utf-8"))
        #expect(FeedDiscovery.isHTML(Data("<?xml version=\"1.0\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">".utf8), contentType: nil))
        #expect(!FeedDiscovery.isHTML(try fixture("rss2.xml"), contentType: "text/html"), "a feed served as text/html is a feed")
        let xhtmlDoctype = "<?xml version=\"1.0\"?><!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"x\">\n<!-- c -->\n<rss><channel/></rss>"
        #expect(!FeedDiscovery.isHTML(Data(xhtmlDoctype.utf8), contentType: nil), "a feed with an XHTML doctype by mistake")
        #expect(FeedDiscovery.isHTML(Data("<!DOCTYPE html>\n<!-- x --><html><head>".utf8), contentType: nil))
        #expect(!FeedDiscovery.isHTML(Data("<!DOCTYPE rss PUBLIC \"-//Netscape Communications//DTD RSS 0.91//EN\" \"x\"><rss/>".utf8),
                                      contentType: "text/html"))
        #expect(FeedDiscovery.feedLinks(in: Data("<html><head></head></html>".utf8), pageURL: URL(string: "https://example.org/")!).isEmpty)
        let inBody = #"<html><head></head><BODY class="x"><link rel="alternate" type="application/rss+xml" href="/comment-spam.xml"></body></html>"#
        #expect(FeedDiscovery.feedLinks(in: Data(inBody.utf8), pageURL: URL(string: "https://example.org/")!).isEmpty, "the head only")
    }

    @Test func aNoteIsSaidOncePerKind() {
        let said = Mutex<[String]>([])
        let notices = NoticeOnce(log: Logger(sentences: { sentence in said.withLock { $0.append(sentence) } }))
        notices.say("the feed at http://a/1: line 6, column 38: the feed is not well-formed XML (x); it was read with recovery")
        notices.say("the feed at http://a/1: line 9, column 2: the feed is not well-formed XML (x); it was read with recovery")
        notices.say("the feed at http://a/1: the document is declared UTF-8 but is not valid UTF-8; it was read as windows-1252")
        #expect(said.withLock { $0.count } == 2)
    }
}
