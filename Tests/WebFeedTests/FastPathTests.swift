import Foundation
import Testing
@testable import WebFeed

/// The byte-level fast paths that keep a cold sync's CPU down give exactly what Foundation
/// gives, on random strings built from the characters that matter: tags, references, white
/// space of every kind, controls, marks.
@Suite struct FastPathTests {
    static let pieces = ["<p>", "</p>", "<br>", "<BR/>", "<li>", "</li>", "<script>x<y</script>", "<style>a{}</style>", "</div>",
                         "<hr>", "<a href=\"x\">", "</a>", "<!-- c -->", "&amp;", "&lt;", "&#65;", "&#x42;", "&nbsp;", "&#10;",
                         "&#13;", "&#9;", "&mdash;", "&#x2003;", "&#x301;", "&#x600;", "&bogus;", "&", ";", "<", ">", " ", "  ",
                         "\t", "\n", "\r\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "\u{2028}", "\u{3000}", "\u{1}",
                         "\u{7F}", "\u{9F}", "\u{301}", "é", "日本", "Item 3 of feed 5", "x", "1", "/", "!", "\"", "'"]

    static func randomStrings(count: Int) -> [String] {
        var generator = SplitMix(seed: 2)
        let pool = pieces
        return (0..<count).map { _ in
            (0..<Int.random(in: 0...12, using: &generator)).map { _ in pool.randomElement(using: &generator)! }.joined()
        }
    }

    @Test func cleanTrimmedAndSingleLineMatchFoundation() {
        for text in Self.randomStrings(count: 4_000) {
            var scalars = String.UnicodeScalarView()
            for scalar in text.unicodeScalars where !((scalar.value < 0x20 && scalar != "\n" && scalar != "\t" && scalar != "\r")
                                                      || (0x7F...0x9F).contains(scalar.value)) { scalars.append(scalar) }
            let foundation = String(scalars).trimmingCharacters(in: .whitespacesAndNewlines)
            let expected: String? = foundation.isEmpty ? nil : (foundation.count > 5 ? String(foundation.prefix(5)) : foundation)
            #expect(FeedText.clean(text, limit: 5) == expected, "\(text.debugDescription)")
            #expect(FeedText.trimmed(text) == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.debugDescription)")
            let single = FeedText.clean(text).map { $0.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ") }
            #expect(FeedText.singleLine(text) == single, "\(text.debugDescription)")
        }
    }

    @Test func byteSearchFindsTheNeedlesBytes() {
        // Bytes, not characters: `<p>` followed by a combining mark is found too (Foundation's
        // `contains` compares characters and would not), which only makes HTMLLinks look closer.
        func bytes(_ needle: String, in text: String) -> Bool { Array(text.utf8).firstRange(of: Array(needle.utf8)) != nil }
        for text in Self.randomStrings(count: 2_000) {
            #expect(FeedText.contains("<p>", in: text) == bytes("<p>", in: text), "\(text.debugDescription)")
            #expect(FeedText.contains("&amp;", in: text) == bytes("&amp;", in: text), "\(text.debugDescription)")
        }
        #expect(FeedText.contains("href=", in: "<a href=\"/x\">") && !FeedText.contains("href=", in: "<a hre=") && !FeedText.contains("href=", in: ""))
    }
}

/// A seeded generator, so a failure names inputs that come back on the next run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
