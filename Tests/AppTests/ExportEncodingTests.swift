import App
import Core
import Foundation
import Testing

/// The hand-written JSON Lines and CSV encoders: the shape `JSONEncoder` gives `PostRecord`,
/// RFC 8259 escaping that survives a round trip, RFC 4180 quoting, and no raw control character.
@Suite struct ExportEncodingTests {
    static let author = User(id: UserID("u1"), handle: "ada", displayName: "Ada \"L\" / Lovelace", avatarURL: URL(string: "https://a.example/ada.png"))

    static func makeRecords() -> [PostRecord] {
        let full = Post(
            id: PostID("p/1"), author: author, text: "line one\nline two\ttab \\ back \u{8}\u{C}\u{1}é 🎉 \u{2028}",
            createdAt: Date(timeIntervalSince1970: 1_769_860_800.25), editedAt: Date(timeIntervalSince1970: 1_769_860_900),
            replyTo: PostID("p0"), counts: Post.Counts(replies: 1, reposts: 2, likes: -3, quotes: 4),
            videoIDs: [VideoID("v1"), VideoID("v\"2")], html: "<p>hi</p>", contentWarning: "cw", language: "en", visibility: .public,
            repost: Post.Repost(by: User(id: UserID("u2"), handle: "bob", displayName: "Bob"), originalID: PostID("orig"),
                                at: Date(timeIntervalSince1970: 1_769_000_000)),
            attachments: [Post.Attachment(kind: "image", url: URL(string: "https://m.example/a.png?x=1&y=2")!, previewURL: nil,
                                          description: "alt, text", title: nil, mimeType: "image/png", sizeBytes: 12, width: 3, height: nil),
                          Post.Attachment(kind: "audio", url: URL(string: "https://m.example/e4.m4a")!, mimeType: "audio/x-m4a",
                                          duration: 3723.5, episode: 4, season: 2)],
            title: "Title", url: URL(string: "https://example.com/p/1"), quoteOf: PostID("q"), labels: ["nsfw", "x"])
        let videos = [Video(id: VideoID("v1"), title: "Clip", duration: 12.5, streamURL: URL(string: "https://v.example/1.m3u8")!,
                            thumbnailURL: URL(string: "https://v.example/1.jpg"), sizeBytes: 1_000_000, width: 640, height: 360,
                            framesPerSecond: 29.97, viewCount: 56_789, rating: 4.5),
                      Video(id: VideoID("v2"), title: "", duration: 30, streamURL: URL(string: "https://v.example/2.m3u8")!)]
        let bare = Post(id: PostID("p2"), author: User(id: UserID("u3"), handle: "c", displayName: "C"), text: "",
                        createdAt: Date(timeIntervalSince1970: 0))
        return [PostRecord(StoredPost(feed: "home", post: full, isRead: true, videos: videos)),
                PostRecord(StoredPost(feed: "home", post: bare, isRead: false))]
    }

    @Test func jsonLinesAreWhatJSONEncoderMakesOfARecord() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601Timestamp.string(from: date))
        }
        for record in Self.makeRecords() {
            var json = JSONText()
            record.appendJSONLine(to: &json)
            let expected = String(decoding: try encoder.encode(record), as: UTF8.self) + "\n"
            #expect(String(decoding: json.bytes, as: UTF8.self) == expected)
        }
    }

    @Test func everyScalarSurvivesTheRoundTripAndNoControlCharacterIsRaw() throws {
        var scalars = (0...0x2FF).compactMap(Unicode.Scalar.init)
        scalars += (0x2000...0x206F).compactMap(Unicode.Scalar.init) + ["\u{1F389}", "\u{FEFF}", "\u{10FFFF}"]
        let text = String(String.UnicodeScalarView(scalars))
        var bytes: [UInt8] = []
        JSONText.appendQuoted(text, to: &bytes)
        let decoded = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) as? String
        #expect(decoded == text)
        let written = String(decoding: bytes, as: UTF8.self).unicodeScalars
        #expect(!written.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value)
                                    || (0x2066...0x2069).contains($0.value) })
    }

    @Test func csvFieldsAreEscapedAsPostsShowsThemThenQuotedPerRFC4180() {
        let cases: [(String, String)] = [
            ("plain", "plain"), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""), ("", ""),
            ("two\nlines", "two\\nlines"), ("cr\r\nlf, too", "\"cr\\r\\nlf, too\""),
            ("\u{1B}[31mred\u{7}", "\\u{1b}[31mred\\u{7}"), ("c1 \u{9B}2J", "c1 \\u{9b}2J"), ("bidi \u{202E}x", "bidi \\u{202e}x"),
            ("tab\there", "tab\\there"), ("é 🎉 \u{2028}", "é 🎉 \u{2028}"),
        ]
        for (value, expected) in cases {
            var bytes: [UInt8] = []
            PostRecord.appendCSVField(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == expected, "\(value.debugDescription)")
            let safe = Terminal.safe(value)
            #expect(expected == safe || expected == "\"" + safe.replacingOccurrences(of: "\"", with: "\"\"") + "\"", "the same escapes as posts")
        }
        var row: [UInt8] = []
        Self.makeRecords()[0].appendCSVRow(to: &row)
        let text = String(decoding: row, as: UTF8.self)
        #expect(text.hasSuffix("\r\n") && text.dropLast(2).allSatisfy { $0 != "\r" && $0 != "\n" })
        #expect(text.hasPrefix("home,p/1,2026-01-31T12:00:00.250Z,2026-01-31T12:01:40Z,u1,ada,\"Ada \"\"L\"\" / Lovelace\","))
    }
}
