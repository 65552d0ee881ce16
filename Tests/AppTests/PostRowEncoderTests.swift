import App
import Core
import Foundation
import ProcessTestSupport
import SQLiteCache
import StoreKit
import Testing

/// `export` writes SQLite's pages from their raw rows (``PostRowEncoder``); every other store's
/// from stored posts (``PostRecord``). The two ways give the same bytes, page by page, in both
/// formats — for plain rows, for the rows the encoder hands to ``PostRecord`` (a repost,
/// attachments, labels), and for what only a hand-edited or damaged store holds (ill-formed
/// UTF-8, an unknown visibility, an author with no handle or name, a URL that `URL` rewrites).
@Suite struct PostRowEncoderTests {
    static func makePosts() -> [Post] {
        let ada = User(id: "u1", handle: "ada", displayName: "Ada \"L\", Lovelace", avatarURL: URL(string: "https://a.example/ada.png"))
        let bob = User(id: "u2", handle: "bob", displayName: "Bob", avatarURL: nil)
        let cy = User(id: "u3", handle: "cy", displayName: "Cy", avatarURL: URL(string: "https://a.example/cy.png"))
        let start = 1_769_860_800.0
        var posts: [Post] = []
        for index in 0..<12 {
            // Equal times in pairs: the page's order breaks ties by id, across page ends too.
            var post = Post(id: PostID("p\(index)"), author: [ada, bob, cy][index % 3], text: "plain post \(index)",
                            createdAt: Date(timeIntervalSince1970: start - Double(index / 2)))
            post.counts = Post.Counts(replies: index, reposts: -index, likes: 1 << 40, quotes: 3)
            posts.append(post)
        }
        posts[1].text = "line one\nline two\ttab \\ back \u{8}\u{C}\u{1}é 🎉 \u{2028} \u{9B}2J \u{7F} \u{202E}, \"quoted\""
        posts[1].videoIDs = [VideoID("v1"), VideoID("gone"), VideoID("v2")]
        posts[2].editedAt = Date(timeIntervalSince1970: start + 0.125)
        posts[2].html = "<p>a, \"b\"</p>"
        posts[2].contentWarning = "cw\n"
        posts[2].language = "fr"
        posts[2].visibility = .followersOnly
        posts[2].title = "Title, with comma"
        posts[2].url = URL(string: "https://example.com/p/2?x=1&y=%20")
        posts[2].replyTo = PostID("p0")
        posts[2].quoteOf = PostID("q")
        posts[3].repost = Post.Repost(by: bob, originalID: PostID("orig"), at: Date(timeIntervalSince1970: start - 100))
        posts[4].attachments = [Post.Attachment(kind: "image", url: URL(string: "https://m.example/a.png")!, description: "alt")]
        posts[5].labels = ["nsfw"]
        posts[6].videoIDs = [VideoID("v1")]
        posts[7].text = ""
        return posts
    }

    static let videos = [
        Video(id: VideoID("v1"), title: "Clip, \"one\"", duration: 12.5, streamURL: URL(string: "https://v.example/1.m3u8")!,
              thumbnailURL: URL(string: "https://v.example/1.jpg"), sizeBytes: 1_000_000, width: 640, height: 360,
              framesPerSecond: 29.97, viewCount: 56_789, rating: 4.5, likeCount: 7, author: "Ada"),
        Video(id: VideoID("v2"), title: "", duration: 30, streamURL: URL(string: "https://v.example/2.m3u8")!),
    ]

    @Test func rowsAndStoredPostsAreWrittenToTheSameBytes() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try await Self.store(Self.makePosts(), in: folder)
        // What only a store edited by hand (or damaged) holds.
        try Self.sqlite(path, """
            UPDATE posts SET text = CAST(X'61FF62C0AF63E282AC64ED9FBFEDA080F4908080' AS TEXT) WHERE id = 'p8';
            UPDATE posts SET visibility = 'friends' WHERE id = 'p9';
            UPDATE posts SET url = 'https://example.com/a b' WHERE id = 'p10';
            UPDATE posts SET author_pk = NULL WHERE author_id = 'u2';
            UPDATE users SET avatar_url = 'https://a.example/c y.png' WHERE id = 'u3';
            INSERT INTO post_state (feed, post_id, read_at, starred_at) VALUES ('home', 'p0', 1, NULL), ('home', 'p2', 1, 2);
            """)
        #expect(try await Self.expectSameBytes(path, pageSize: 5) == 3)
    }

    /// A new folder for a store.
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-rows-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A SQLite store in `folder` holding `posts` (of the feed "home") and ``videos``; its path.
    static func store(_ posts: [Post], in folder: URL) async throws -> String {
        let path = folder.appendingPathComponent("cache.sqlite").path
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        let page = FeedPage(changes: posts.map { .upsert($0) }, nextCursor: FeedCursor(position: "1"), hasMore: false)
        _ = try await store.apply(page, videos: videos, under: FeedLease(feed: "home", token: "test"))
        await store.close()
        return path
    }

    /// Reads the store at `path` page by page, both ways, and expects the same bytes from
    /// each in both formats; returns how many pages there were.
    static func expectSameBytes(_ path: String, pageSize: Int) async throws -> Int {
        let reopened = SQLiteFeedStore(path: path)
        try await reopened.open()
        var after: StoredPost.Position?
        var pages = 0
        repeat {
            let query = PostQuery(feed: "home", limit: pageSize, stable: true, after: after)
            let rows = ExportPage.rows(try await reopened.postRows(matching: query))
            let posts = ExportPage.posts(try await reopened.posts(matching: query))
            #expect(rows.count == posts.count)
            #expect(rows.lastPosition == posts.lastPosition)
            for csv in [false, true] {
                let fromRows = try rows.encoded(csv: csv), fromPosts = try posts.encoded(csv: csv)
                #expect(fromRows == fromPosts, "page \(pages) as \(csv ? "CSV" : "JSON Lines"):\n\(String(decoding: fromRows, as: UTF8.self))\n\(String(decoding: fromPosts, as: UTF8.self))")
            }
            after = posts.count == pageSize ? posts.lastPosition : nil
            pages += 1
        } while after != nil
        await reopened.close()
        return pages
    }

    /// Seeded posts with every member a plain row can have, or not: texts of the pieces the
    /// export's escapers look at (é and ✨ share their lead bytes with C1 controls and the
    /// bidirectional overrides), times with and without milliseconds, every visibility and
    /// one that is no visibility, video lists. JSON Lines written from the rows (literal keys,
    /// strings escaped from their bytes) is what ``PostRecord/write(to:)`` writes of the posts,
    /// and so is CSV; also while a secret is registered, whose text some posts hold.
    @Test func seededPlainRowsAreWrittenAsTheirStoredPosts() async throws {
        let secret = Secret("jsonl40-row-secret-k3Jx9-4f2a")
        var random = SeededRandom(seed: 4040)
        let pieces = ["plain words ", "é", "✨", "🚀", "\u{85}", "\u{9F}", "\u{A0}", "\u{202E}", "\u{2069}", "\u{2028}", "\u{7F}", "\u{1B}[2J",
                      "\n", "\t", "\u{0}", "\"", "\\", ",", "/", "Zürich naïve São ", secret.revealed]
        func text(_ count: Int) -> String { (0..<count).map { _ in pieces[random.next(below: pieces.count)] }.joined() }
        func maybe<Value>(_ value: @autoclosure () -> Value) -> Value? { random.next(below: 3) == 0 ? nil : value() }
        let authors = [User(id: "u1", handle: "ada", displayName: "Ada ✨ \u{202E}", avatarURL: URL(string: "https://a.example/ada.png")),
                       User(id: "u2", handle: "bob", displayName: "Bob", avatarURL: nil),
                       User(id: "u3", handle: "cy é", displayName: "", avatarURL: URL(string: "https://a.example/%C3%A9.png"))]
        let visibilities: [Post.Visibility?] = [nil, .public, .unlisted, .followersOnly, .direct]
        var posts: [Post] = []
        for index in 0..<240 {
            var post = Post(id: PostID("s\(index)"), author: authors[random.next(below: authors.count)],
                            text: text(random.next(below: 12)),
                            createdAt: Date(timeIntervalSince1970: 1_769_860_800 - Double(random.next(below: 5_000_000)) / 1000))
            post.counts = Post.Counts(replies: random.next(below: 1000), reposts: -random.next(below: 9), likes: random.next(below: 1 << 40), quotes: 0)
            post.editedAt = maybe(Date(timeIntervalSince1970: 1_769_860_800 + Double(random.next(below: 3_600_000)) / 1000))
            post.contentWarning = maybe(text(2))
            post.html = maybe("<p>\(text(3))</p>")
            post.language = maybe(["fr", "de", "pt-BR"][random.next(below: 3)])
            post.title = maybe(text(2))
            post.url = maybe(URL(string: "https://example.com/p/\(index)?q=%20%C3%A9")!)
            post.replyTo = maybe(PostID("r\(index)"))
            post.quoteOf = maybe(PostID("q\(text(1))"))
            post.visibility = visibilities[random.next(below: visibilities.count)]
            post.videoIDs = random.next(below: 4) == 0 ? [VideoID("v1"), VideoID("gone \(text(1))"), VideoID("v2")].filter { _ in random.next(below: 2) == 0 } : []
            posts.append(post)
        }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try await Self.store(posts, in: folder)
        // A visibility no `Post.Visibility` names, and authors with no handle or name, as a hand-edited store holds them.
        try Self.sqlite(path, """
            UPDATE posts SET visibility = 'friends' WHERE id IN ('s3', 's30', 's31');
            UPDATE posts SET author_pk = NULL WHERE author_id = 'u3';
            """)
        #expect(try await Self.expectSameBytes(path, pageSize: 64) == 4)
        withExtendedLifetime(secret) {}
    }

    @Test func wellFormedUTF8IsWrittenAsItIsAndIllFormedAsStringRepairsIt() {
        // Seeded bytes, biased to the lead and continuation bytes where UTF-8's rules bite.
        var random = SeededRandom(seed: 40)
        let alphabet: [UInt8] = [0x41, 0x22, 0x5C, 0x0A, 0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xAA, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                                 0xE2, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF, 0x81, 0xA6,
                                 // CSV's own: a comma, CR, tab, ESC, and the ends of the bidirectional ranges.
                                 0x2C, 0x0D, 0x09, 0x1B, 0xAE, 0xA9, 0xA5, 0xAF]
        for _ in 0..<20_000 {
            let bytes = (0..<Int(random.next() % 9)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            bytes.withUnsafeBufferPointer { utf8 in
                let string = String(decoding: utf8, as: UTF8.self)
                #expect(JSONWriter.isWellFormed(utf8) == string.utf8.elementsEqual(bytes), "\(bytes)")
                var fromBytes = JSONWriter(escaping: .terminalControls), fromString = JSONWriter(escaping: .terminalControls)
                fromBytes.string(utf8: utf8)
                fromString.string(string)
                #expect(fromBytes.bytes == fromString.bytes, "\(bytes)")
                var csvFromBytes: [UInt8] = [], csvFromString: [UInt8] = []
                PostRecord.appendCSVField(utf8: utf8, to: &csvFromBytes)
                PostRecord.appendCSVField(string, to: &csvFromString)
                #expect(csvFromBytes == csvFromString, "\(bytes)")
            }
        }
    }

    /// JSON strings escaped from their bytes (eight ASCII bytes passed over at a time, UTF-8
    /// checked in the same pass) against the rules written out scalar by scalar over the string
    /// `String` repairs the bytes into: RFC 8259's escapes, then each ``JSONWriter/Escaping``'s.
    /// Seeded texts up to 40 bytes, mostly ASCII, so runs of eight meet every byte that stops them.
    @Test func jsonStringsFromBytesAreTheStringsRulesScalarByScalar() {
        var random = SeededRandom(seed: 4041)
        let ascii = Array(0x20...0x7E).map(UInt8.init) + [0x22, 0x5C, 0x22, 0x5C, 0x7F, 0x1F, 0x00, 0x0A, 0x09, 0x08, 0x0C, 0x0D, 0x1B]
        let other: [UInt8] = [0x80, 0x85, 0x9F, 0xA0, 0xAA, 0xAE, 0xA6, 0xA9, 0xBF, 0xC0, 0xC2, 0xC3, 0xDF, 0xE0, 0xE2, 0xE2, 0x81, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
        let escapings: [JSONWriter.Escaping] = [[], .terminalControls, .controlsAsUnicode, .replacingNUL, [.terminalControls, .controlsAsUnicode, .replacingNUL]]
        for _ in 0..<20_000 {
            let bytes = (0..<random.next(below: 41)).map { _ in
                random.next(below: 4) == 0 ? other[random.next(below: other.count)] : ascii[random.next(below: ascii.count)]
            }
            let string = String(decoding: bytes, as: UTF8.self)
            for escaping in escapings {
                var fromBytes: [UInt8] = [], written = JSONWriter(escaping: escaping)
                bytes.withUnsafeBufferPointer { utf8 in
                    JSONWriter.appendString(utf8: utf8, escaping: escaping, to: &fromBytes)
                    written.string(utf8: utf8)
                }
                let expected = Self.reference(string, escaping)
                #expect(fromBytes == expected, "\(bytes) \(escaping)")
                #expect(written.bytes == expected, "\(bytes) \(escaping)")
            }
        }
    }

    /// A JSON string as the rules say, scalar by scalar.
    static func reference(_ text: String, _ escaping: JSONWriter.Escaping) -> [UInt8] {
        var out = "\""
        let named: [UInt32: String] = escaping.contains(.controlsAsUnicode) ? [:] : [0x0A: "n", 0x0D: "r", 0x09: "t", 0x08: "b", 0x0C: "f"]
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let terminal = escaping.contains(.terminalControls)
                && ((0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value))
            if value == 0x22 || value == 0x5C {
                out += "\\" + String(scalar)
            } else if value == 0, escaping.contains(.replacingNUL) {
                out += "\\ufffd"
            } else if let name = named[value] {
                out += "\\" + name
            } else if value < 0x20 || terminal {
                let hex = String(value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return Array((out + "\"").utf8)
    }

    @Test func csvFieldsWithASecretRegisteredAreRedactedAsTheStringsAre() {
        let secret = Secret("csv40-field-secret-k3Jx9-4f2a")
        var random = SeededRandom(seed: 41)
        let pieces = ["\u{1b}[2J", ",", "\"", "\u{202e}", "\u{85}", "é", "✨", "\n", "plain", secret.revealed]
        for _ in 0..<2_000 {
            let text = (0..<Int(random.next() % 5)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            var fromBytes: [UInt8] = [], fromString: [UInt8] = []
            Array(text.utf8).withUnsafeBufferPointer { PostRecord.appendCSVField(utf8: $0, to: &fromBytes) }
            PostRecord.appendCSVField(text, to: &fromString)
            #expect(fromBytes == fromString, "\(text.debugDescription)")
        }
        withExtendedLifetime(secret) {}
    }

    private static func sqlite(_ path: String, _ sql: String) throws {
        let (status, printed) = try runSQLite3(path, sql)
        #expect(status == 0, "\(String(decoding: printed, as: UTF8.self))")
    }
}
