import Foundation
@testable import IntegrationKit
import ProcessTestSupport
import Testing

/// How an answer's head line is read, byte by byte, for every transfer.
@Suite struct HeaderLineTests {
    func read(_ bytes: [UInt8]) -> HeaderLine { bytes.withUnsafeBytes { HeaderLine($0) } }
    func read(_ text: String) -> HeaderLine { read(Array(text.utf8)) }

    @Test func aFieldLosesTheSpacesAroundItsPartsAndItsLineEnd() {
        #expect(read("Content-Type: application/json\r\n") == .field(name: "content-type", value: "application/json"))
        #expect(read("X-RateLimit-Remaining \t:\t 299 \r\n") == .field(name: "x-ratelimit-remaining", value: "299"))
        #expect(read("ETag:\"v7\"\n") == .field(name: "etag", value: "\"v7\""))
        #expect(read("Retry-After:   \r\n") == .field(name: "retry-after", value: ""))
    }

    @Test func onlyTheFirstColonSplitsAndInnerSpacesStay() {
        #expect(read("Link: <https://a.example/x?max_id=1>; rel=\"next\"\r\n")
                == .field(name: "link", value: "<https://a.example/x?max_id=1>; rel=\"next\""))
        #expect(read("Date: Sat, 28 Nov 2026 06:00:00 GMT\r\n") == .field(name: "date", value: "Sat, 28 Nov 2026 06:00:00 GMT"))
    }

    @Test func statusLinesBlankLinesAndLinesWithoutAColon() {
        #expect(read("HTTP/1.1 200 OK\r\n") == .status("HTTP/1.1 200 OK\r\n"))
        #expect(read("HTTP/2 304\r\n") == .status("HTTP/2 304\r\n"))
        #expect(read("\r\n") == .end)
        #expect(read("\n") == .end)
        #expect(read(" \r\n") == .other, "a space is not the end of the head")
        #expect(read("no colon here\r\n") == .other)
        #expect(read(": empty name\r\n") == .field(name: "", value: "empty name"))
    }

    @Test func bytesThatAreNotUTF8AreRepairedNotTrusted() {
        let line: [UInt8] = Array("X-Name: a".utf8) + [0xFF, 0xC3] + Array("b\r\n".utf8)
        #expect(read(line) == .field(name: "x-name", value: "a\u{FFFD}\u{FFFD}b"))
        #expect(read(Array("X-Ünï: v\r\n".utf8)) == .field(name: "x-ünï", value: "v"), "a name beyond ASCII is lowered as a String")
    }

    /// The reading it replaced trimmed with `CharacterSet`: for every ASCII line the two agree.
    @Test func asciiLinesAreReadAsTheCharacterSetTrimmingReadThem() {
        var generator = SeededRandom(seed: 40)
        let pieces = ["a", "Z", "-", ":", " ", "\t", "\r", "\n", "\u{0B}", "\u{0C}", "x", "7", "\"", ";", "="]
        for _ in 0..<5_000 {
            let line = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            guard !line.hasPrefix("HTTP/"), line != "\r\n", line != "\n", let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(read(line) == .field(name: name, value: value), "\(line.debugDescription)")
        }
    }
}
