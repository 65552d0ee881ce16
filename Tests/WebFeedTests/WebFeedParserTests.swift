import Core
import Foundation
import IntegrationKit
import Testing
@testable import WebFeed

/// The parser and the mapping on the shapes feedparser cannot check: JSON Feed, broken and
/// hostile documents, identity across re-renderings, dates, and what becomes a video.
@Suite struct WebFeedParserTests {
    let base = URL(string: "http://fixtures.example/feeds/x")

    @Test func jsonFeed11ReadsAuthorsContentAttachmentsAndRelativeURLs() throws {
        let document = try WebFeedParser.parse(try fixture("jsonfeed11.json"), feedURL: base)
        #expect(document.format == .jsonFeed)
        #expect(document.title == "JSON Feed 1.1 Example")
        let second = document.entries[0], first = document.entries[1]
        #expect(second.id == "2" && second.title == "Second post")
        #expect(second.html?.contains("<a href=\"https://json.example.com/\">") == true)
        #expect(second.published == InternetDate.rfc3339("2026-02-02T12:00:00Z") && second.updated == InternetDate.rfc3339("2026-02-03T12:00:00Z"))
        #expect(second.authors.map(\.name) == ["Guest Writer"])
        #expect(second.language == "en-GB")
        #expect(second.enclosures.map(\.type) == ["audio/x-m4a", "video/mp4"] && second.enclosures[0].length == 89_970_236)
        #expect(first.id == "1", "a numeric id reads as its digits")
        #expect(first.link?.absoluteString == "https://json.example.com/1", "relative to feed_url")
        #expect(first.plainText == "Plain text only.\nSecond line." && first.html == nil)
        #expect(first.authors.isEmpty && document.authors.map(\.name) == ["Jason Feed"], "the feed's authors stand in")
    }

    @Test func jsonFeed10ReadsTheSingleAuthorAndSummaryAndExternalURL() throws {
        let document = try WebFeedParser.parse(try fixture("jsonfeed10.json"), feedURL: base)
        #expect(document.authors.map(\.name) == ["Solo Author"])
        #expect(document.entries[0].plainText == "A summary.")
        #expect(document.entries[1].link?.absoluteString == "https://elsewhere.example.org/b")
    }

    @Test func aMalformedFeedIsRecoveredWithANoteOrIsAnErrorWithLineAndColumn() throws {
        // Items can be read: recovered, and the note says where the document broke.
        let recovered = try WebFeedParser.parse(try fixture("malformed.xml"), feedURL: base)
        // The unclosed <b> is markup in the title, read as its text.
        #expect(recovered.entries.map(\.title) == ["Unclosed bold"])
        #expect(recovered.notes.first?.hasPrefix("line 6, column ") == true, "\(recovered.notes)")
        // Nothing can be read: the strict parse's error.
        let error = try #require(throws: WebFeedParseError.self) {
            try WebFeedParser.parse(Data("<?xml version=\"1.0\"?>\n<rss version=\"2.0\">\n<channel><title>x</b></rss>".utf8), feedURL: base)
        }
        #expect(error.line == 3, "\(error)")
        #expect(error.column != nil && error.description.hasPrefix("line "), "\(error)")
    }

    @Test func entityDeclarationsAreRefusedBeforeAnyExpansion() throws {
        let error = try #require(throws: WebFeedParseError.self) { try WebFeedParser.parse(try fixture("billion-laughs.xml"), feedURL: base) }
        #expect(error.reason.contains("entities"), "\(error)")
    }

    @Test func xmlThatIsNotAFeedSaysWhatItIs() throws {
        let error = try #require(throws: WebFeedParseError.self) { try WebFeedParser.parse(try fixture("not-a-feed.html"), feedURL: base) }
        #expect(error.reason.contains("<html>"), "\(error)")
        #expect(throws: WebFeedParseError.self) { try WebFeedParser.parse(Data("{\"items\": []}".utf8), feedURL: base) }
        #expect(throws: WebFeedParseError.self) { try WebFeedParser.parse(Data("  \n".utf8), feedURL: base) }
        #expect(throws: WebFeedParseError.self) {
            try WebFeedParser.parse(Data("<?xml version=\"1.0\" encoding=\"EBCDIC\"?><rss/>".utf8), feedURL: base)
        }
    }

    @Test func identityIsStableAcrossTrivialReRenderings() throws {
        let original = try WebFeedParser.parse(try fixture("rss2.xml"), feedURL: base)
        let rerendered = try WebFeedParser.parse(try fixture("rss2-rerendered.xml"), feedURL: base)
        let ids = Set(original.entries.map(WebFeedMapping.identity))
        for entry in rerendered.entries {
            #expect(ids.contains(WebFeedMapping.identity(of: entry)), "\(entry.title ?? "")")
        }
        let hashed = original.entries.map(WebFeedMapping.identity).filter { $0.hasPrefix("sha256:") }
        #expect(hashed.count == 1, "only the item with no guid and no link is known by its content: \(hashed)")
        let linked = original.entries.first { $0.title == "Tue, single digit day and PDT" }.map(WebFeedMapping.identity)
        #expect(linked == "https://example.org/posts/pdt", "no guid: the link")
    }

    @Test func datesInTheFormsFeedsWrite() {
        let expected = InternetDate.rfc3339("2026-02-03T14:30:00Z")
        #expect(FeedDate.date(from: "Tue, 03 Feb 2026 09:30:00 EST") == expected)
        #expect(FeedDate.date(from: "3 Feb 2026 14:30 GMT") == expected, "no weekday, single-digit day, no seconds")
        #expect(FeedDate.date(from: "Tue, 03 Feb 26 15:30:00 +0100") == expected, "two-digit year")
        #expect(FeedDate.date(from: "2026-02-03T15:30:00+01:00") == expected)
        #expect(FeedDate.date(from: "2026-02-03T14:30:00.000Z") == expected)
        #expect(FeedDate.date(from: "2026-02-03t14:30z") == expected)
        #expect(FeedDate.date(from: "Tue, 30 Feb 2026 09:30:00 EST") == nil, "no 30 February")
        #expect(FeedDate.date(from: "yesterday") == nil)
        for impossible in ["Tue, 03 Feb 2026 09:30:00 +2500", "Tue, 03 Feb 2026 09:30:00 -9999", "Tue, 03 Feb 2026 09:30:00 +25:00",
                           "Tue, 03 Feb 2026 09:30:00 +0060", "2026-02-03T14:30:00+25:00", "2026-02-03T14:30:00-9999"] {
            #expect(FeedDate.date(from: impossible) == nil, "no zone is more than 23:59 away: \(impossible)")
        }
        #expect(FeedDate.date(from: "Tue, 03 Feb 1 14:30:00 GMT") == nil, "a one-digit year is no year")
        #expect(FeedDate.date(from: "Tue, 03 Feb 126 14:30:00 GMT") == FeedDate.date(from: "3 Feb 2026 14:30 GMT"), "RFC 2822 §4.3: a three-digit year adds 1900")
        #expect(FeedDate.date(from: String(repeating: "9", count: 10_000)) == nil)
    }

    @Test func videosBecomeVideosAndOtherEnclosuresAttachments() throws {
        let document = try WebFeedParser.parse(try fixture("rss2.xml"), feedURL: base)
        let mapped = WebFeedMapping.changes(document, firstSeen: [:], now: Date(timeIntervalSince1970: 1_800_000_000))
        let screencast = try #require(mapped.posts.first { $0.title == "Screencast: building feeds" })
        #expect(screencast.videoIDs == ["https://cdn.example.org/feeds.mp4"])
        #expect(mapped.videos.map(\.sizeBytes) == [104_857_600])
        #expect(screencast.attachments.map(\.kind) == ["unknown"] && screencast.attachments[0].mimeType == "application/pdf")
        let episode = try #require(mapped.posts.first { $0.id == "tag:example.org,2026:episode-12" })
        #expect(episode.attachments.map { "\($0.kind) \($0.mimeType ?? "") \($0.sizeBytes ?? 0)" } == ["audio audio/mpeg 24986239"])
        #expect(episode.html?.contains("<b>caching</b>") == true)
        #expect(episode.text == "We talk about caching & ETags.\n\nSecond paragraph\nwith a break.")
        #expect(episode.author.displayName == "Jane Doe" && episode.url?.absoluteString == "https://example.org/episodes/12")
        #expect(mapped.posts.map(\.createdAt) == mapped.posts.map(\.createdAt).sorted(), "oldest first")
    }

    @Test func aFeedWithMoreItemsThanAreReadSaysSoSoThatNoWalkSweeps() throws {
        let items = (0...XMLFeedParser.maxEntries).map { "<item><guid>g\($0)</guid><title>t</title></item>" }.joined()
        let document = try WebFeedParser.parse(Data("<rss version=\"2.0\"><channel><title>big</title>\(items)</channel></rss>".utf8), feedURL: base)
        let mapped = WebFeedMapping.changes(document, firstSeen: [:], now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(mapped.posts.count == XMLFeedParser.maxEntries)
        #expect(mapped.skipped.contains { $0.postID == nil && $0.reason.contains("\(XMLFeedParser.maxEntries) items or more") })
        var walk = FullWalk(feed: "news")
        walk.note(FeedPage(changes: mapped.posts.map(FeedChange.upsert), skipped: mapped.skipped, nextCursor: FeedCursor(position: "x"), hasMore: false))
        #expect(!walk.canSweep)
        let duplicate = WebFeedMapping.changes(try WebFeedParser.parse(Data(
            "<rss version=\"2.0\"><channel><item><guid>a</guid></item><item><guid>a</guid></item></channel></rss>".utf8), feedURL: base),
            firstSeen: [:], now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(duplicate.skipped.map(\.postID) == ["a"], "a listed twice is listed: it counts as seen")
    }

    @Test func anItemWithoutADateKeepsItsFirstSeenTime() throws {
        let document = try WebFeedParser.parse(try fixture("rss2.xml"), feedURL: base)
        let first = WebFeedMapping.changes(document, firstSeen: [:], now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(first.firstSeen.count == 1)
        let later = WebFeedMapping.changes(document, firstSeen: first.firstSeen, now: Date(timeIntervalSince1970: 1_900_000_000))
        let undated = { (mapped: WebFeedMapping.Mapped) in mapped.posts.first { $0.title == "No date, no guid, no link" }?.createdAt }
        #expect(undated(first) == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(undated(later) == undated(first), "the next poll does not move it")
    }

    @Test func windows1252AndLatin1AreDecoded() throws {
        let cp = try WebFeedParser.parse(try fixture("windows1252.xml"), feedURL: base)
        #expect(cp.entries.first?.title == "Price: €5 – “quoted” … ‘done’")
        let latin = try WebFeedParser.parse(try fixture("latin1.xml"), feedURL: base)
        #expect(latin.entries.first?.title == "Ça déborde à Noël")
    }

    @Test func hostileStringsAreBounded() throws {
        let huge = String(repeating: "x", count: 3 << 20)
        let feed = "<rss version=\"2.0\"><channel><title>\(huge)</title><item><guid>a</guid><description>\(huge)</description></item></channel></rss>"
        let document = try WebFeedParser.parse(Data(feed.utf8), feedURL: base)
        #expect((document.title?.count ?? 0) <= FeedText.maxShort)
        #expect((document.entries.first?.html?.utf8.count ?? .max) <= FeedText.maxContentBytes)
        let deep = String(repeating: "<x>", count: 500) + String(repeating: "</x>", count: 500)
        #expect(throws: WebFeedParseError.self) { try WebFeedParser.parse(Data("<rss><channel>\(deep)</channel></rss>".utf8), feedURL: base) }
    }
}
