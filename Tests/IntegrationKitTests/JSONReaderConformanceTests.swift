import Foundation
import IntegrationKit
import ProcessTestSupport
import Testing

/// The reader against RFC 8259's grammar, case by case: what it accepts, what it refuses, and
/// what text a string becomes.
@Suite struct JSONReaderConformanceTests {
    enum Outcome: Equatable {
        case valid
        case invalid
        case tooDeep
    }

    /// Reads `bytes` as one JSON text: a value, then nothing but white space.
    func outcome(_ bytes: [UInt8]) -> Outcome {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            do {
                try reader.skipValue()
                return reader.isAtEnd ? .valid : .invalid
            } catch is JSONReader.TooDeepError {
                return .tooDeep
            } catch {
                return .invalid
            }
        }
    }

    func outcome(_ json: String) -> Outcome { outcome(Array(json.utf8)) }

    /// The text a JSON string reads as, or `nil` when it is refused.
    func text(_ json: String) -> String? {
        Array(json.utf8).withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            guard let text = try? reader.string("s"), reader.isAtEnd else { return nil }
            return text
        }
    }

    // RFC 8259 §6: number = [ minus ] int [ frac ] [ exp ]; int = zero / ( digit1-9 *DIGIT ).
    static let numbers: [(String, Outcome)] = [
        ("0", .valid), ("-0", .valid), ("7", .valid), ("-7", .valid), ("10", .valid), ("1234567890", .valid),
        ("0.5", .valid), ("-0.5", .valid), ("10.25", .valid), ("1e5", .valid), ("1E5", .valid), ("1e+5", .valid),
        ("1e-5", .valid), ("0e0", .valid), ("0.0e-00", .valid), ("-1.5E+10", .valid), ("1e400", .valid),
        // leading zeros
        ("012", .invalid), ("-01", .invalid), ("00", .invalid), ("-00", .invalid), ("00.5", .invalid), ("01e2", .invalid),
        // missing parts
        ("-", .invalid), (".5", .invalid), ("-.5", .invalid), ("5.", .invalid), ("5.e1", .invalid), ("1e", .invalid),
        ("1e+", .invalid), ("1e-", .invalid),
        // not JSON's numbers
        ("+1", .invalid), ("0x10", .invalid), ("1_000", .invalid), ("NaN", .invalid), ("Infinity", .invalid),
        ("-Infinity", .invalid), ("1.5.5", .invalid), ("--1", .invalid), ("1 2", .invalid),
    ]

    @Test(arguments: numbers) func numberCase(_ json: String, _ expected: Outcome) {
        #expect(outcome(json) == expected, "\(json)")
        // Inside an array, where the byte after a number is another token.
        #expect(outcome("[\(json)]") == expected, "[\(json)]")
    }

    // RFC 8259 §7: the two-character escapes and \u with four hex digits; nothing else.
    static let escapes: [(String, String?)] = [
        (#""\"""#, "\""), (#""\\""#, "\\"), (#""\/""#, "/"), (#""\b""#, "\u{8}"), (#""\f""#, "\u{C}"),
        (#""\n""#, "\n"), (#""\r""#, "\r"), (#""\t""#, "\t"),
        (#""\u0041""#, "A"), (#""\u00e9""#, "é"), (#""\u00E9""#, "é"), (#""\u20AC""#, "€"), (#""\uFFFF""#, "\u{FFFF}"),
        (#""a\u0062c""#, "abc"), (#""\u0041\u0042""#, "AB"),
        // surrogate pairs (§7: "\uD834\uDD1E" is G clef)
        (#""\uD834\uDD1E""#, "𝄞"), (#""\ud83d\ude00""#, "😀"), (#""x\uDBFF\uDFFFy""#, "x\u{10FFFF}y"),
        // lone surrogates: each is one U+FFFD, and the escape after it is read on its own
        (#""A\ud800\u0041B""#, "A\u{FFFD}AB"), (#""\ud800\ud83d\ude00""#, "\u{FFFD}😀"), (#""\ud800""#, "\u{FFFD}"),
        (#""\ud800x""#, "\u{FFFD}x"), (#""\udc00""#, "\u{FFFD}"), (#""\udc00\ud800""#, "\u{FFFD}\u{FFFD}"),
        (#""\ude00\ud83d""#, "\u{FFFD}\u{FFFD}"), (#""\ud800\n""#, "\u{FFFD}\n"), (#""\ud800\\u0041""#, "\u{FFFD}\\u0041"),
        (#""\ud800\ud800\udc00""#, "\u{FFFD}𐀀"),
        // NUL is never text feedsync stores
        (#""a\u0000b""#, "a\u{FFFD}b"),
        // refused
        (#""\x41""#, nil), (#""\a""#, nil), (#""\'""#, nil), (#""\u41""#, nil), (#""\u004""#, nil), (#""\u00G1""#, nil),
        (#""\U0041""#, nil), (#""\""#, nil), (#""abc"#, nil), (#""\u"#, nil),
    ]

    @Test(arguments: escapes) func escapeCase(_ json: String, _ expected: String?) {
        #expect(text(json) == expected, "\(json)")
    }

    // §7: "All Unicode characters may be placed within the quotation marks, except for the
    // characters that MUST be escaped: quotation mark, reverse solidus, and the control
    // characters (U+0000 through U+001F)."
    @Test func controlCharactersMustBeEscaped() {
        for byte in UInt8(0)...0x1F {
            #expect(outcome([0x22, 0x61, byte, 0x22]) == .invalid, "raw 0x\(String(byte, radix: 16)) in a string")
            let escaped = String(format: "\"\\u%04x\"", byte)
            #expect(text(escaped) == (byte == 0 ? "\u{FFFD}" : String(UnicodeScalar(byte))), "\(escaped)")
        }
        // DEL and C1 controls need no escape.
        #expect(text("\"\u{7F}\u{85}\"") == "\u{7F}\u{85}")
    }

    /// Strings are scanned eight bytes at a time until a quote, a backslash or a control
    /// character; whatever lands where in a word, reading and skipping see every byte. Seeded
    /// strings of plain text, multi-byte characters, escapes and raw control characters (which
    /// are refused), read and skipped, each followed by another value.
    @Test func everyByteIsSeenWhereverItFallsInAWord() {
        let pieces: [(json: [UInt8], text: String?)] = [
            (Array("a".utf8), "a"), (Array("plain text".utf8), "plain text"), (Array("é".utf8), "é"), (Array("🙂".utf8), "🙂"),
            (Array(#"\""#.utf8), "\""), (Array(#"\\"#.utf8), "\\"), (Array(#"\n"#.utf8), "\n"), (Array(#"\u00e9"#.utf8), "é"),
            (Array("\u{7F}".utf8), "\u{7F}"), ([0x01], nil), ([0x1F], nil), ([0x09], nil), ([0x00], nil),
        ]
        var random = SeededRandom(seed: 8)
        for _ in 0..<5_000 {
            var json: [UInt8] = [0x22], expected: String? = ""
            for _ in 0..<random.next(below: 24) {
                let piece = pieces[random.next(below: pieces.count)]
                json += piece.json
                expected = piece.text.flatMap { text in expected.map { $0 + text } }
            }
            json += Array(#"", 1]"#.utf8)
            let shown = String(decoding: json, as: UTF8.self).debugDescription
            json.withUnsafeBufferPointer { buffer in
                var reader = JSONReader(buffer)
                #expect((try? reader.string("s")) == expected, "\(shown)")
                var skipper = JSONReader(buffer)
                let skipped = (try? skipper.skipValue()) != nil
                #expect(skipped == (expected != nil), "\(shown)")
                if expected != nil {
                    #expect(reader.offset == json.count - 4 && skipper.offset == json.count - 4, "\(shown) ends at its quote")
                }
            }
        }
    }

    // §8.1: JSON text is UTF-8. Bytes that are not read as U+FFFD, one per maximal bad
    // subsequence (Unicode §3.9), and never end the string early.
    static let utf8: [([UInt8], String)] = [
        ([0xC3, 0xA9], "é"), ([0xF0, 0x9F, 0x98, 0x80], "😀"),
        ([0xFF], "\u{FFFD}"), ([0xC3], "\u{FFFD}"), ([0x80], "\u{FFFD}"), ([0xC0, 0xAF], "\u{FFFD}\u{FFFD}"),
        ([0xED, 0xA0, 0x80], "\u{FFFD}\u{FFFD}\u{FFFD}"), ([0xF4, 0x90, 0x80, 0x80], "\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}"),
        ([0x61, 0xE2, 0x82, 0x62], "a\u{FFFD}b"),
    ]

    @Test(arguments: utf8) func utf8Case(_ inner: [UInt8], _ expected: String) {
        for escaped in [false, true] {
            // With an escape after it, the string takes the slow path.
            let bytes = [0x22] + inner + (escaped ? Array(#"\n"#.utf8) : []) + [0x22]
            let read = bytes.withUnsafeBufferPointer { buffer -> String? in
                var reader = JSONReader(buffer)
                return try? reader.string("s")
            }
            #expect(read == expected + (escaped ? "\n" : ""), "\(inner)")
        }
    }

    // §2 and §4-5: structure, literals and white space.
    static let structure: [(String, Outcome)] = [
        ("{}", .valid), ("[]", .valid), (" \t\r\n[ 1 , 2 ]\n", .valid), (#"{"a":1,"b":[true,false,null]}"#, .valid),
        (#"{"a":{"b":{"c":[]}}}"#, .valid), (#""""#, .valid), ("true", .valid), ("null", .valid), (#"{"a":1,"a":2}"#, .valid),
        ("[1,]", .invalid), ("[,1]", .invalid), (#"{"a":1,}"#, .invalid), (#"{"a"}"#, .invalid), (#"{a:1}"#, .invalid),
        (#"{'a':1}"#, .invalid), ("[1 2]", .invalid), ("[", .invalid), ("]", .invalid), ("{", .invalid), ("", .invalid),
        ("   ", .invalid), ("tru", .invalid), ("True", .invalid), ("nul", .invalid), ("[1]]", .invalid), ("[1] x", .invalid),
        ("\u{0B}[]", .invalid), ("\u{A0}[]", .invalid), ("[1]\u{0C}", .invalid),
    ]

    @Test(arguments: structure) func structureCase(_ json: String, _ expected: Outcome) {
        #expect(outcome(json) == expected, "\(json)")
    }

    @Test func nestingUpToTheLimitIsReadAndDeeperIsTooDeep() {
        let limit = JSONReader.maxDepth
        #expect(outcome(String(repeating: "[", count: limit) + String(repeating: "]", count: limit)) == .valid)
        #expect(outcome(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)) == .tooDeep)
        #expect(outcome(String(repeating: #"{"a":"#, count: limit + 1) + "1" + String(repeating: "}", count: limit + 1)) == .tooDeep)
        // Too deep is valid JSON the reader declines; broken JSON stays a syntax error, however deep.
        #expect(outcome(String(repeating: "[", count: 10)) == .invalid)
        #expect(outcome(String(repeating: "[", count: 100_000)) == .invalid, "cut short")
        #expect(outcome(String(repeating: "[", count: 1_000) + "1," + String(repeating: "]", count: 1_000)) == .invalid)
        #expect(outcome(String(repeating: #"{"a":"#, count: 1_000) + "01" + String(repeating: "}", count: 1_000)) == .invalid)
        #expect(outcome(String(repeating: #"{"a":[{"b":"#, count: 600) + #"[1,"x",true,null,{}]"# + String(repeating: "}]}", count: 600)) == .tooDeep)
    }
}
