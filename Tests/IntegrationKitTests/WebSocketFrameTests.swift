import Core
import Foundation
import IntegrationKit
import Testing

/// RFC 6455 framing: the examples of §5.7 byte for byte, then the rules of §5 a client checks.
@Suite struct WebSocketFrameTests {
    static let hello = Array("Hello".utf8)
    static let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    // §5.7, the five examples, as a server sends them (unmasked) and as a client does (masked).
    @Test func singleFrameUnmaskedText() throws {
        let bytes: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
        #expect(WebSocketFrame(.text, Self.hello).encoded(mask: nil) == bytes)
        var reader = WebSocketReader()
        #expect(try reader.feed(bytes) == [.text("Hello")])
    }

    @Test func singleFrameMaskedText() {
        #expect(WebSocketFrame(.text, Self.hello).encoded(mask: Self.mask) == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test func fragmentedUnmaskedText() throws {
        var reader = WebSocketReader()
        #expect(try reader.feed([0x01, 0x03, 0x48, 0x65, 0x6C]) == [])
        #expect(try reader.feed([0x80, 0x02, 0x6C, 0x6F]) == [.text("Hello")])
    }

    @Test func pingAndMaskedPong() throws {
        var reader = WebSocketReader()
        #expect(try reader.feed([0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]) == [.ping(Self.hello)])
        #expect(WebSocketFrame(.pong, Self.hello).encoded(mask: Self.mask) == [0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test func sixteenAndSixtyFourBitLengths() throws {
        let short = WebSocketFrame(.binary, [UInt8](repeating: 7, count: 256)).encoded(mask: nil)
        #expect(Array(short.prefix(4)) == [0x82, 0x7E, 0x01, 0x00])
        let long = WebSocketFrame(.binary, [UInt8](repeating: 7, count: 65536)).encoded(mask: nil)
        #expect(Array(long.prefix(10)) == [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0])
        var reader = WebSocketReader()
        #expect(try reader.feed(short + long) == [.binary([UInt8](repeating: 7, count: 256)), .binary([UInt8](repeating: 7, count: 65536))])
    }

    @Test func aFrameArrivingByteByByteIsPutTogether() throws {
        var reader = WebSocketReader()
        var messages: [WebSocketMessage] = []
        for byte in WebSocketFrame(.text, Array(String(repeating: "é", count: 200).utf8)).encoded(mask: nil) { messages += try reader.feed([byte]) }
        #expect(messages == [.text(String(repeating: "é", count: 200))])
    }

    @Test func aControlFrameMayComeBetweenFragments() throws {
        var reader = WebSocketReader()
        let bytes = [0x01, 0x03, 0x48, 0x65, 0x6C] + [0x89, 0x00] + [0x80, 0x02, 0x6C, 0x6F] as [UInt8]
        #expect(try reader.feed(bytes) == [.ping([]), .text("Hello")])
    }

    @Test func closeFramesCarryTheirCode() throws {
        var reader = WebSocketReader()
        #expect(try reader.feed(WebSocketFrame.close(1001, reason: "bye").encoded(mask: nil)) == [.close(code: 1001, reason: "bye")])
        #expect(try reader.feed([0x88, 0x00]) == [.close(code: nil, reason: "")])
        #expect(WebSocketFrame.close(1000).payload == [0x03, 0xE8])
    }

    /// Every rule broken, with the close code the client answers (§7.4.1).
    @Test(arguments: [
        ([0x81, 0x85, 1, 2, 3, 4, 0, 0, 0, 0, 0], 1002, "masked frame"),      // §5.1: a server never masks
        ([0x83, 0x00], 1002, "reserved opcode 3"),                             // §5.2
        ([0x8B, 0x00], 1002, "reserved opcode 11"),
        ([0xC1, 0x00], 1002, "reserved bit"),                                  // RSV1 without an extension (no compression)
        ([0x09, 0x00], 1002, "fragmented a control frame"),                    // §5.5
        ([0x89, 0x7E, 0x00, 0x7E], 1002, "control frame longer than 125"),
        ([0x80, 0x00], 1002, "continuation frame with no message"),            // §5.4
        ([0x01, 0x00, 0x81, 0x00], 1002, "began a message before finishing"),
        ([0x88, 0x01, 0x03], 1002, "close frame of one byte"),                 // §5.5.1
        // §7.4: close codes that may not appear on the wire are a protocol error, never echoed.
        ([0x88, 0x02, 0x00, 0x00], 1002, "close code 0, which is not used"),   // §7.4.2: 0–999
        ([0x88, 0x02, 0x03, 0xE7], 1002, "close code 999, which is not used"),
        ([0x88, 0x02, 0x03, 0xEC], 1002, "close code 1004, which is reserved"), // §7.4.1
        ([0x88, 0x02, 0x03, 0xED], 1002, "close code 1005, which stands for a condition"),
        ([0x88, 0x02, 0x03, 0xEE], 1002, "close code 1006, which stands for a condition"),
        ([0x88, 0x02, 0x03, 0xF7], 1002, "close code 1015, which stands for a condition"),
        ([0x88, 0x02, 0x03, 0xF8], 1002, "close code 1016, which is reserved and not registered"),   // §7.4.2
        ([0x88, 0x02, 0x0B, 0xB7], 1002, "close code 2999, which is reserved and not registered"),
        ([0x88, 0x02, 0x13, 0x88], 1002, "close code 5000, which is outside"),
        ([0x88, 0x02, 0xFF, 0xFF], 1002, "close code 65535, which is outside"),
        ([0x88, 0x04, 0x03, 0xED, 0xC3, 0x28], 1002, "close code 1005"),     // the code is judged first
        ([0x88, 0x04, 0x03, 0xE8, 0xC3, 0x28], 1007, "close reason is not UTF-8"),            // §5.5.1, §8.1
        ([0x88, 0x03, 0x03, 0xE8, 0xE2], 1007, "close reason is not UTF-8"),                   // cut short
        ([0x88, 0x05, 0x03, 0xE8, 0xED, 0xA0, 0x80], 1007, "close reason is not UTF-8"),       // a surrogate
        ([0x88, 0x06, 0x0F, 0xA0, 0xF4, 0x90, 0x80, 0x80], 1007, "close reason is not UTF-8"), // past U+10FFFF
        ([0x81, 0x02, 0xC3, 0x28], 1007, "not UTF-8"),                         // §8.1
        ([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], 1002, "top bit"),
        ([0x82, 0x7F, 0, 0, 0, 0, 0, 0x10, 0, 1], 1009, "longer than 1048576 bytes"),  // the cap, refused from the header alone
    ] as [([UInt8], Int, String)])
    func brokenRulesAreRefused(_ bytes: [UInt8], _ code: Int, _ reason: String) {
        var reader = WebSocketReader()
        #expect {
            _ = try reader.feed(bytes)
        } throws: { error in
            guard let failure = error as? WebSocketReader.Failure else { return false }
            return failure.code == UInt16(code) && failure.reason.contains(reason)
        }
    }

    /// Every code a close frame can hold, against the ranges of §7.4 and IANA's registry: the
    /// valid ones are delivered with their reason, the others refused with 1002.
    @Test func everyCloseCodeIsJudgedByTheRangesOfTheRFC() throws {
        let valid = Set<UInt16>([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014]).union(3000...4999)
        var accepted: Set<UInt16> = []
        for code in UInt16.min...UInt16.max {
            var reader = WebSocketReader()
            do {
                let messages = try reader.feed(WebSocketFrame.close(code, reason: "é").encoded(mask: nil))
                #expect(messages == [.close(code: code, reason: "é")])
                accepted.insert(code)
            } catch {
                #expect(error.code == 1002 && error.reason.contains("close code \(code),"), "\(code): \(error.reason)")
            }
        }
        #expect(accepted == valid)
    }

    @Test func fragmentsTogetherOverTheCapAreRefused() throws {
        var reader = WebSocketReader(maxMessageBytes: 10)
        #expect(try reader.feed(WebSocketFrame(fin: false, .text, [UInt8](repeating: 65, count: 8)).encoded(mask: nil)) == [])
        #expect(throws: WebSocketReader.Failure.self) {
            _ = try reader.feed(WebSocketFrame(.continuation, [UInt8](repeating: 65, count: 3)).encoded(mask: nil))
        }
    }

    // §1.3 / §4.2.2: the example key and its accept value.
    @Test func acceptValueOfTheRFCExample() {
        #expect(WebSocketHandshake.accept(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func handshakeAnswersAreChecked() throws {
        let handshake = WebSocketHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==")
        let good = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        try handshake.check(good, operation: "test")
        let cases: [(String, String)] = [
            (good.replacingOccurrences(of: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", with: "AAAA"), "does not match"),
            (good + "\r\nSec-WebSocket-Extensions: permessage-deflate", "extension that was not offered"),
            ("HTTP/1.1 302 Found\r\nLocation: https://elsewhere.example/subscribe", "redirects (302) to https://elsewhere.example/subscribe"),
            ("HTTP/1.1 200 OK\r\nContent-Type: text/html", "not 101"),
            ("SSH-2.0-OpenSSH", "did not answer with HTTP"),
        ]
        for (head, reason) in cases {
            #expect(throws: ServiceError.self) { try handshake.check(head, operation: "test") }
            do { try handshake.check(head, operation: "test") } catch let error as ServiceError { #expect(error.reason.contains(reason), "\(error.reason)") }
        }
        let request = String(decoding: handshake.request(for: URL(string: "ws://127.0.0.1:8080/subscribe?cursor=5")!), as: UTF8.self)
        #expect(request.hasPrefix("GET /subscribe?cursor=5 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"))
        #expect(request.contains("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n") && request.hasSuffix("\r\n\r\n"))
        #expect(!request.contains("Extensions") && !request.contains("Authorization"))
    }
}
