import Foundation
import IntegrationKit
import Testing

/// The reader's numbers, key matching and skipping, as the integrations rely on them.
@Suite struct JSONReaderNumbersAndKeysTests {
    func read<T>(_ json: String, _ body: (inout JSONReader) throws -> T) throws -> T {
        try Data(json.utf8).withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            let value = try body(&reader)
            let consumed = reader.isAtEnd
            #expect(consumed, "the value was consumed: \(json)")
            return value
        }
    }

    func fieldError(_ json: String, _ body: (inout JSONReader) throws -> Any?) -> String? {
        do {
            _ = try read(json, body)
            return nil
        } catch let error as JSONReader.FieldError {
            return error.reason
        } catch {
            return "\(error)"
        }
    }

    @Test func wholeNumbersReadAsJSONDecoderReadsAnInt() throws {
        for (json, value) in [("5", 5), ("-0", 0), ("5.0", 5), ("5e2", 500), ("0.5e1", 5), ("9223372036854775807", Int.max)] {
            #expect(try read(json) { reader in try reader.optionalWholeNumber("n") } == value, "\(json)")
        }
        #expect(try read("null") { reader in try reader.optionalWholeNumber("n") } == nil)
        #expect(fieldError("3.5") { reader in try reader.optionalWholeNumber("n") } == "n is not a whole number")
        #expect(fieldError("1e300") { reader in try reader.optionalWholeNumber("n") } == "n is out of range")
        #expect(fieldError("9223372036854775808") { reader in try reader.optionalWholeNumber("n") } == "n is out of range")
        #expect(fieldError(#""5""#) { reader in try reader.optionalWholeNumber("n") } == "n is not of the expected type")
    }

    @Test func doublesAreFinite() throws {
        #expect(try read("2.5e-3") { reader in try reader.optionalDouble("d") } == 0.0025)
        #expect(try read("null") { reader in try reader.optionalDouble("d") } == nil)
        #expect(fieldError("1e400") { reader in try reader.optionalDouble("d") } == "d is out of range")
        #expect(fieldError("true") { reader in try reader.optionalDouble("d") } == "d is not of the expected type")
    }

    enum Field: String, CaseIterable { case id, created_at, media_attachments, emoji = "é" }

    @Test func keysMatchOnTheBytesAndEscapedKeysAreDecodedFirst() throws {
        let keys = JSONKeys<Field>()
        let seen = try read(#"{"id": 1, "idx": 2, "created_at": 3, "\u0069d": 4, "media_attachments": 5, "é": 6, "": 7, "i": 8}"#) { reader in
            var seen: [Field?] = []
            try reader.readObject(keys) { reader, field in
                seen.append(field)
                try reader.skipValue()
            }
            return seen
        }
        #expect(seen == [.id, nil, .created_at, .id, .media_attachments, .emoji, nil, nil])
    }

    @Test func skippedStringsAreCheckedAsReadOnesAre() throws {
        try read(#"["plain", "esc\"aped \u00e9 \ud83d\ude00 \/ \n"]"#) { reader in try reader.skipValue() }
        for bad in [#"["bad \x escape"]"#, #"["cut \u12"]"#, "[\"raw \u{01} control\"]", #"["never ends]"#] {
            #expect(throws: JSONReader.SyntaxError.self, "\(bad)") { try read(bad) { reader in try reader.skipValue() } }
        }
    }

    @Test func aValueMetBeforeIsRecognisedByItsBytesAndSkipped() throws {
        let json = #"[{"id": "1", "n": [1, 2]}, {"id": "1", "n": [1, 2]} , {"id": "1", "n": [1, 3]}, 12, 123]"#
        try read(json) { reader in
            var first: [UInt8] = []
            var recognised: [Bool] = []
            var index = 0
            try reader.readArray { reader in
                defer { index += 1 }
                if index == 0 {
                    _ = try reader.peek()
                    let start = reader.offset
                    try reader.skipValue()
                    first = reader.bytes(since: start)
                } else if index == 3 {
                    _ = try reader.peek()
                    let start = reader.offset
                    try reader.skipValue()
                    let number = reader.bytes(since: start)
                    let matched = reader.skip(ifNext: number)
                    #expect(!matched, "a number's bytes may begin a longer number")
                    return
                } else {
                    let matched = reader.skip(ifNext: first)
                    recognised.append(matched)
                    if !matched { try reader.skipValue() }
                }
            }
            #expect(recognised == [true, false, false])
        }
    }
}
