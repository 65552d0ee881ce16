import App
import Core
import Foundation
import Testing

/// A record's JSON (the shape `JSONEncoder` gave `PostRecord`) and CSV (RFC 4180 quoting, no
/// raw control character). The escapes themselves are `CoreTests.JSONWriterTests`'.
@Suite struct ExportEncodingTests {
    static let author = User(id: UserID("u1"), handle: "ada", displayName: "Ada \"L\" / Lovelace", avatarURL: URL(string: "https://a.example/ada.png"))

    static func makeRecords() -> [PostRecord] {
        let full = Post(
            id: PostID("p/1"), author: author, text: "line one\nline two\ttab \\ back \u{8}\u{C}\u{1}é 🎉 \u{2028} \u{9B}2J \u{7F} \u{202E}",
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

    static func encoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601Timestamp.string(from: date))
        }
        return encoder
    }

    /// `JSONEncoder`'s output with DEL, C1 controls and bidirectional overrides escaped, as
    /// `printJSON` escaped them.
    static func escapingTerminalControls(_ json: Data) -> String {
        var text = ""
        for scalar in String(decoding: json, as: UTF8.self).unicodeScalars {
            if (0x7F...0x9F).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) {
                text += String(format: "\\u%04x", scalar.value)
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// The record's one JSON form is what `JSONEncoder` made of it when it was `Encodable`: every
    /// stored property (found by reflection, so a property left out of `write(to:)` fails this),
    /// sorted keys, no `nil` members. Compact for `export`; `posts --json`'s pretty layout with
    /// `[]` for an empty array and C1 controls escaped, as `printJSON` printed it.
    @Test func theJSONFormIsWhatJSONEncoderMadeOfTheRecord() throws {
        for record in Self.makeRecords() {
            var line = JSONWriter(escaping: .terminalControls)
            record.write(to: &line)
            line.newline()
            #expect(line.text == Self.escapingTerminalControls(try Self.encoder(pretty: false).encode(Reflected(record))) + "\n")
            var pretty = JSONWriter(escaping: .terminalControls, layout: .indented)
            pretty.openArray()
            record.write(to: &pretty)
            pretty.closeArray()
            let expected = Self.escapingTerminalControls(try Self.encoder(pretty: true).encode([Reflected(record)]))
                .replacingOccurrences(of: #"\[\n\s*\]"#, with: "[]", options: .regularExpression)
            #expect(pretty.text == expected)
        }
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

/// Any value `Encodable` by reflection: structs as objects of their stored properties (a `nil`
/// one left out), arrays as arrays, URLs as their absolute string: what synthesized `Encodable`
/// conformances wrote of a record.
struct Reflected: Encodable {
    let value: Any
    init(_ value: Any) { self.value = value }

    struct Key: CodingKey {
        var stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch value {
        case let value as String: return try single.encode(value)
        case let value as Bool: return try single.encode(value)
        case let value as Int: return try single.encode(value)
        case let value as Int64: return try single.encode(value)
        case let value as Double: return try single.encode(value)
        case let value as Date: return try single.encode(value)
        case let value as URL: return try single.encode(value.absoluteString)
        case let value as WebLink: return try single.encode(value.absoluteString)
        default: break
        }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .collection {
            var list = encoder.unkeyedContainer()
            for child in mirror.children { try list.encode(Reflected(child.value)) }
            return
        }
        var object = encoder.container(keyedBy: Key.self)
        for child in mirror.children {
            let inner = Mirror(reflecting: child.value)
            if inner.displayStyle == .optional {
                guard let some = inner.children.first else { continue }
                try object.encode(Reflected(some.value), forKey: Key(stringValue: child.label!))
            } else {
                try object.encode(Reflected(child.value), forKey: Key(stringValue: child.label!))
            }
        }
    }
}
