import Core
import Foundation
import ProcessTestSupport
@testable import StoreKit
import Testing

/// `posts.attachments` is written by hand for speed; it must stay byte for byte what
/// `JSONEncoder` wrote before, or every stored post with attachments would look changed.
@Suite struct AttachmentsJSONTests {
    /// What the store wrote before: `JSONEncoder`, sorted keys, slashes unescaped.
    func encodedByJSONEncoder(_ attachments: [Post.Attachment]) throws -> String {
        let rows = attachments.map(AttachmentsJSON.Fields.init)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(rows), as: UTF8.self)
    }

    /// Every ASCII character, the escapes JSON has, and characters beyond ASCII.
    static let awkwardTexts: [String] = [
        "", "plain", "a/b\\c\"d", String((0 ..< 128).map { Character(Unicode.Scalar(UInt8($0))) }),
        "tab\there\nline\r\u{8}\u{C}", "é 猫 🎞️ \u{2028}\u{2029}\u{FEFF}", "</script>&amp;'",
    ]

    @Test func awkwardTextsAndEveryFieldEncodeAsJSONEncoderDid() throws {
        let url = URL(string: "https://media.example/a/b.png?x=1&y=%20")!
        for text in Self.awkwardTexts {
            let full = Post.Attachment(kind: text.isEmpty ? "image" : text, url: url, previewURL: URL(string: "https://x.example/p/q.jpg"),
                                       description: text, title: text, mimeType: text, sizeBytes: -9_000_000_000_000,
                                       width: Int.max, height: 0, duration: 3723.5, episode: 12, season: 0)
            let bare = Post.Attachment(kind: "link", url: url)
            for attachments in [[full], [bare], [bare, full, bare]] {
                #expect(AttachmentsJSON.encode(attachments, dialect: .sqlite) == (try encodedByJSONEncoder(attachments)), "\(text.debugDescription)")
            }
        }
        #expect(AttachmentsJSON.encode([], dialect: .sqlite) == "[]")
        #expect(AttachmentsJSON.encode([], dialect: .postgres) == "[]")
    }

    @Test func randomAttachmentsEncodeAsJSONEncoderDid() throws {
        var random = SeededRandom(seed: 21)
        let pieces = Self.awkwardTexts + ["", "x"]
        for _ in 0 ..< 300 {
            func text() -> String? { Bool.random(using: &random) ? nil : pieces.randomElement(using: &random)! }
            func int() -> Int? { Bool.random(using: &random) ? nil : Int.random(in: -5 ... 1 << 40, using: &random) }
            let attachments = (0 ..< Int.random(in: 1 ... 4, using: &random)).map { n in
                Post.Attachment(kind: text() ?? "image", url: URL(string: "https://e.example/\(n)")!,
                                previewURL: Bool.random(using: &random) ? URL(string: "http://p.example/\(n)?a=b") : nil,
                                description: text(), title: text(), mimeType: text(), sizeBytes: int().map(Int64.init),
                                width: int(), height: int(), duration: int().map { Double($0) / 1000 }, episode: int(), season: int())
            }
            #expect(AttachmentsJSON.encode(attachments, dialect: .sqlite) == (try encodedByJSONEncoder(attachments)))
        }
    }
}

extension AttachmentsJSONTests {
    /// What the PostgreSQL store wrote before: `JSONEncoder`'s bytes with each `\u0000` escape
    /// turned into `\ufffd` (its text holds no NUL).
    @Test func postgresDialectIsJSONEncoderWithNULReplaced() throws {
        for text in Self.awkwardTexts + ["a\u{0}b", "\u{0}"] {
            let attachment = Post.Attachment(kind: "image", url: URL(string: "https://m.example/x")!, description: text, title: text)
            let expected = try encodedByJSONEncoder([attachment]).replacingOccurrences(of: "\\u0000", with: "\\ufffd")
            #expect(AttachmentsJSON.encode([attachment], dialect: .postgres) == expected, "\(text.debugDescription)")
        }
    }

    /// A field added to `Post.Attachment` but left out of the hand-written encoder, or out of
    /// order, makes the two differ here.
    @Test func everyFieldIsWrittenInKeyOrder() throws {
        let full = Post.Attachment(kind: "image", url: URL(string: "https://m.example/x")!, previewURL: URL(string: "https://m.example/p"),
                                   description: "d", title: "t", mimeType: "image/png", sizeBytes: 7, width: 3, height: 4,
                                   duration: 3723.25, episode: 12, season: 2)
        #expect(AttachmentsJSON.encode([full], dialect: .sqlite) == (try encodedByJSONEncoder([full])))
        #expect(AttachmentsJSON.decode(AttachmentsJSON.encode([full], dialect: .sqlite)) == [full])
    }
}

/// SplitMix64: the same sequence on every run.
