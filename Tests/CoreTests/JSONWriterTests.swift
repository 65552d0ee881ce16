import Core
import Foundation
import Testing

/// The one JSON writer: what `JSONEncoder` writes (sorted keys, slashes unescaped, and its
/// pretty layout), each escaping option's table, and a round trip of every scalar.
@Suite struct JSONWriterTests {
    static func encoded(_ value: some Encodable, pretty: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func written(escaping: JSONWriter.Escaping = [], layout: JSONWriter.Layout = .compact,
                        _ write: (inout JSONWriter) -> Void) -> String {
        var json = JSONWriter(escaping: escaping, layout: layout)
        write(&json)
        return json.text
    }

    /// RFC 8259 §7 (the escapes every writer makes), then what each option adds.
    static let escapes: [(text: String, plain: String, unicode: String, terminal: String, nul: String)] = [
        ("a", #""a""#, #""a""#, #""a""#, #""a""#),
        ("q\"b\\s/", #""q\"b\\s/""#, #""q\"b\\s/""#, #""q\"b\\s/""#, #""q\"b\\s/""#),
        ("\n\r\t\u{8}\u{C}", #""\n\r\t\b\f""#, #""\u000a\u000d\u0009\u0008\u000c""#, #""\n\r\t\b\f""#, #""\n\r\t\b\f""#),
        ("\u{0}\u{1}\u{1F}", #""\u0000\u0001\u001f""#, #""\u0000\u0001\u001f""#, #""\u0000\u0001\u001f""#, #""\ufffd\u0001\u001f""#),
        ("\u{7F}\u{80}\u{9F}\u{A0}", "\"\u{7F}\u{80}\u{9F}\u{A0}\"", "\"\u{7F}\u{80}\u{9F}\u{A0}\"", #""\u007f\u0080\u009f ""#.replacingOccurrences(of: " ", with: "\u{A0}"),
         "\"\u{7F}\u{80}\u{9F}\u{A0}\""),
        ("\u{202A}\u{202E}\u{2066}\u{2069}\u{2028}\u{2067}x", "\"\u{202A}\u{202E}\u{2066}\u{2069}\u{2028}\u{2067}x\"",
         "\"\u{202A}\u{202E}\u{2066}\u{2069}\u{2028}\u{2067}x\"", "\"\\u202a\\u202e\\u2066\\u2069\u{2028}\\u2067x\"",
         "\"\u{202A}\u{202E}\u{2066}\u{2069}\u{2028}\u{2067}x\""),
        ("é 東京 🚀", "\"é 東京 🚀\"", "\"é 東京 🚀\"", "\"é 東京 🚀\"", "\"é 東京 🚀\""),
    ]

    @Test func stringsAreEscapedAsEachOptionSays() throws {
        for row in Self.escapes {
            #expect(Self.written { $0.string(row.text) } == row.plain, "\(row.text.debugDescription)")
            #expect(Self.written { $0.string(row.text) } == (try Self.encoded(row.text)), "as JSONEncoder: \(row.text.debugDescription)")
            #expect(Self.written(escaping: .controlsAsUnicode) { $0.string(row.text) } == row.unicode, "\(row.text.debugDescription)")
            #expect(Self.written(escaping: .terminalControls) { $0.string(row.text) } == row.terminal, "\(row.text.debugDescription)")
            #expect(Self.written(escaping: .replacingNUL) { $0.string(row.text) } == row.nul, "\(row.text.debugDescription)")
        }
    }

    @Test func everyScalarSurvivesTheRoundTripAndNoControlCharacterIsRawForATerminal() throws {
        var scalars = (0...0x2FF).compactMap(Unicode.Scalar.init)
        scalars += (0x2000...0x206F).compactMap(Unicode.Scalar.init) + ["\u{1F389}", "\u{FEFF}", "\u{10FFFF}"]
        let text = String(String.UnicodeScalarView(scalars))
        for escaping: JSONWriter.Escaping in [[], .terminalControls, .controlsAsUnicode, [.terminalControls, .controlsAsUnicode]] {
            let written = Self.written(escaping: escaping) { $0.string(text) }
            let decoded = try JSONSerialization.jsonObject(with: Data(written.utf8), options: .fragmentsAllowed) as? String
            #expect(decoded == text)
            let controls = written.unicodeScalars.filter { $0.value < 0x20 || (0x7F...0x9F).contains($0.value)
                || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) }
            #expect(escaping.contains(.terminalControls) ? controls.isEmpty : controls.count == 0x21 + 5 + 4)
        }
    }

    /// Numbers as `JSONEncoder` writes them: `description` without a trailing `.0`.
    @Test func numbersAreWhatJSONEncoderWrites() throws {
        let doubles: [Double] = [0, -0.0, 1, -1, 12.5, 29.97, 0.1, 1e-06, -1.2345678901234e-06, 999_999_999_999_999, 1e15, 9_007_199_254_740_992,
                       1e16, 123_456_789.125, .leastNonzeroMagnitude, 1.7976931348623157e308, -3e-5]
        for value in doubles {
            #expect(Self.written { $0.double(value) } == (try Self.encoded(value)), "\(value)")
        }
        #expect(Self.written { $0.double(.infinity) } == "null" && Self.written { $0.double(.nan) } == "null")
        for value in [Int64.min, -1, 0, 7, Int64.max] {
            #expect(Self.written { $0.int(value) } == (try Self.encoded(value)))
        }
        #expect(Self.written { $0.int(Int.min) } == "-9223372036854775808")
    }

    struct Sample: Encodable {
        struct Inner: Encodable { var x: Int; var list: [String] }
        var empty: [Int] = []
        var flag = true
        var inner = Inner(x: 1, list: ["a", "b/c"])
        var items: [Inner] = [Inner(x: 2, list: []), Inner(x: 3, list: ["d"])]
        var name: String? = "n"
        var missing: String?
    }

    func writeSample(_ json: inout JSONWriter) {
        let sample = Sample()
        json.openObject()
        json.key("empty")
        json.openArray()
        json.closeArray()
        json.bool("flag", sample.flag)
        json.key("inner")
        writeInner(sample.inner, &json)
        json.key("items")
        json.openArray()
        for item in sample.items { writeInner(item, &json) }
        json.closeArray()
        json.string("missing", sample.missing)
        json.string("name", sample.name)
        json.closeObject()
    }

    func writeInner(_ inner: Sample.Inner, _ json: inout JSONWriter) {
        json.openObject()
        json.strings("list", inner.list)
        json.int("x", inner.x)
        json.closeObject()
    }

    /// Compact, and `JSONEncoder`'s pretty layout with an empty array as `[]`, as `posts --json`
    /// has always printed it.
    @Test func layoutsAreJSONEncodersWithEmptyArraysOnOneLine() throws {
        #expect(Self.written { writeSample(&$0) } == (try Self.encoded(Sample())))
        let pretty = try Self.encoded(Sample(), pretty: true).replacingOccurrences(of: #"\[\n\s*\]"#, with: "[]", options: .regularExpression)
        #expect(Self.written(layout: .indented) { writeSample(&$0) } == pretty)
        #expect(Self.written(layout: .indented) { json in
            json.openArray()
            json.openObject()
            json.closeObject()
            json.closeArray()
        } == "[\n  {}\n]")
    }

    @Test func linesOfJSONLinesStartAfresh() {
        let text = Self.written { json in
            for id in ["a", "b"] {
                json.openObject()
                json.string("id", id)
                json.date("at", Date(timeIntervalSince1970: 1.25))
                json.closeObject()
                json.newline()
            }
        }
        #expect(text == "{\"id\":\"a\",\"at\":\"1970-01-01T00:00:01.250Z\"}\n{\"id\":\"b\",\"at\":\"1970-01-01T00:00:01.250Z\"}\n")
    }
}
