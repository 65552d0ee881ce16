import Core
import Foundation
import StoreKit
import Testing

/// The PostgreSQL store's `jsonb` parameters (a page's authors, a batch of resolved videos) are
/// written by Core's JSONWriter: byte for byte what `JSONEncoder` wrote before, NUL as U+FFFD.
@Suite struct ColumnsJSONTests {
    /// What the store wrote before: `JSONEncoder`, sorted keys, slashes unescaped, `\u0000` as `\ufffd`.
    func encodedByJSONEncoder(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self).replacingOccurrences(of: "\\u0000", with: "\\ufffd")
    }

    @Test func authorsAndVideosAreWhatJSONEncoderWrote() throws {
        for text in AttachmentsJSONTests.awkwardTexts + ["nul \u{0} here"] {
            let users = [UserColumns(User(id: UserID("u/\(text)"), handle: text, displayName: text, avatarURL: URL(string: "https://a.example/x.png")),
                                     at: Date(timeIntervalSince1970: 1.5)),
                         UserColumns(User(id: UserID("u2"), handle: "h", displayName: "d"), at: Date(timeIntervalSince1970: -86_400))]
            #expect(UserColumns.json(users, dialect: .postgres) == (try encodedByJSONEncoder(users)), "\(text.debugDescription)")
            let videos = [VideoColumns(Video(id: VideoID(text), title: text, duration: 12.345, streamURL: URL(string: "https://v.example/1.m3u8")!,
                                             thumbnailURL: URL(string: "https://v.example/1.jpg"), sizeBytes: 1 << 40, width: 1920, height: 1080,
                                             framesPerSecond: 29.97, viewCount: 0, rating: 4.5)),
                          VideoColumns(Video(id: VideoID("v2"), title: "", duration: 0, streamURL: URL(string: "https://v.example/2")!,
                                             framesPerSecond: 30, rating: -0.25))]
            #expect(VideoColumns.json(videos, dialect: .postgres) == (try encodedByJSONEncoder(videos)), "\(text.debugDescription)")
        }
        #expect(UserColumns.json([], dialect: .postgres) == "[]" && VideoColumns.json([], dialect: .postgres) == "[]")
    }
}
