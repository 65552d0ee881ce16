@testable import Bluesky
import ProcessTestSupport
import Testing

/// The identifier checks read bytes in place; they must answer as the string-based checks they
/// replaced (kept below as the oracle) for every text, hostile ones included.
@Suite struct BlueskyIdentifierTests {
    @Test func theSpecsExamplesAreTakenOrRefused() {
        #expect(BlueskyIdentifier.isDID("did:plc:z72i7hdynmk6r22z27h6tvur"))
        #expect(BlueskyIdentifier.isDID("did:web:example.com%3A8080"))
        for bad in ["did:plc:", "did::abc", "did:PLC:abc", "did:plc:abc:", "DID:plc:abc", "did:plc:a b", "did:plc", "did:plcé:abc"] {
            #expect(!BlueskyIdentifier.isDID(bad), "\(bad)")
        }
        #expect(BlueskyIdentifier.isHandle("alice.bsky.social"))
        for bad in ["alice", ".bsky.social", "alice..social", "-alice.social", "alice-.social", "al_ice.social", ""] {
            #expect(!BlueskyIdentifier.isHandle(bad), "\(bad)")
        }
        let uri = BlueskyIdentifier.atURI("at://did:plc:abc/app.bsky.feed.post/3k2yihcrp6f2c", collection: "app.bsky.feed.post")
        #expect(uri == .init(authority: "did:plc:abc", collection: "app.bsky.feed.post", recordKey: "3k2yihcrp6f2c"))
        #expect(BlueskyIdentifier.atURI("at://did:plc:abc/app.bsky.feed.like/3k2", collection: "app.bsky.feed.post") == nil)
        #expect(BlueskyIdentifier.atURI("at://alice.bsky.social/app.bsky.graph.list/x")?.collection == "app.bsky.graph.list")
        for bad in ["at://did:plc:abc/app.bsky.feed.post", "at://did:plc:abc/app.bsky.feed.post/k/extra", "at://did:plc:abc/app.bsky/k",
                    "at://did:plc:abc/app.bsky.feed.post/..", "https://did:plc:abc/app.bsky.feed.post/k", "at:///app.bsky.feed.post/k"] {
            #expect(BlueskyIdentifier.atURI(bad) == nil, "\(bad)")
        }
    }

    @Test func everyTextGetsTheAnswerTheStringChecksGave() {
        // Pieces a server might send, whole and broken: the characters each check treats apart,
        // a combining mark (which changes what String's own comparisons see), and multi-byte text.
        let pieces = ["at://", "did:", "plc", "web", ":", "/", ".", "..", "-", "_", "~", "%", "app", "bsky", "feed", "post",
                      "A", "z", "9", "é", "e\u{301}", "\u{301}", " ", "\u{0}", "🙂", "app.bsky.feed.post", "did:plc:z72i7hdynmk6r22z27h6tvur",
                      "alice.bsky.social", "3k2yihcrp6f2c", String(repeating: "a", count: 64)]
        var random = SeededRandom(seed: 40)
        for _ in 0..<20_000 {
            let text = (0..<random.next(below: 8)).map { _ in pieces[random.next(below: pieces.count)] }.joined()
            #expect(BlueskyIdentifier.isDID(text) == Oracle.isDID(text), "isDID \(text.debugDescription)")
            #expect(BlueskyIdentifier.isHandle(text) == Oracle.isHandle(text), "isHandle \(text.debugDescription)")
            #expect(BlueskyIdentifier.isNSID(text) == Oracle.isNSID(text), "isNSID \(text.debugDescription)")
            #expect(BlueskyIdentifier.isRecordKey(text) == Oracle.isRecordKey(text), "isRecordKey \(text.debugDescription)")
            for expected in [nil, "app.bsky.feed.post"] {
                #expect(BlueskyIdentifier.atURI(text, collection: expected) == Oracle.atURI(text, collection: expected),
                        "atURI \(text.debugDescription)")
            }
        }
    }

    /// The checks as they were written on `String` before they read bytes in place.
    enum Oracle {
        static func isDID(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            guard bytes.count <= 2_048, text.hasPrefix("did:"), bytes.last != UInt8(ascii: ":") else { return false }
            let rest = bytes.dropFirst(4)
            guard let colon = rest.firstIndex(of: UInt8(ascii: ":")), colon > rest.startIndex, colon < rest.endIndex - 1 else { return false }
            guard rest[rest.startIndex..<colon].allSatisfy({ (0x61...0x7A).contains($0) }) else { return false }
            return rest[(colon + 1)...].allSatisfy { isAlphanumeric($0) || ".:_%-".utf8.contains($0) }
        }

        static func isHandle(_ text: String) -> Bool {
            guard !text.isEmpty, text.utf8.count <= 253 else { return false }
            let labels = text.split(separator: ".", omittingEmptySubsequences: false)
            guard labels.count >= 2 else { return false }
            return labels.allSatisfy { label in
                let bytes = Array(label.utf8)
                return (1...63).contains(bytes.count) && bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") }
                    && bytes.first != UInt8(ascii: "-") && bytes.last != UInt8(ascii: "-")
            }
        }

        static func atURI(_ text: String, collection expected: String?) -> BlueskyIdentifier.ATURI? {
            let bytes = text.utf8
            guard bytes.count <= 8_192, text.hasPrefix("at://") else { return nil }
            var parts: [Substring] = []
            var start = text.utf8.index(text.utf8.startIndex, offsetBy: 5)
            var index = start
            while index < bytes.endIndex {
                if bytes[index] == UInt8(ascii: "/") {
                    guard parts.count < 2 else { return nil }
                    parts.append(text[start..<index])
                    start = bytes.index(after: index)
                }
                index = bytes.index(after: index)
            }
            parts.append(text[start..<index])
            guard parts.count == 3 else { return nil }
            let (authority, collection, key) = (String(parts[0]), String(parts[1]), String(parts[2]))
            if let expected { guard collection == expected else { return nil } } else { guard isNSID(collection) else { return nil } }
            guard isDID(authority) || isHandle(authority), isRecordKey(key) else { return nil }
            return .init(authority: authority, collection: collection, recordKey: key)
        }

        static func isNSID(_ text: String) -> Bool {
            let segments = text.split(separator: ".", omittingEmptySubsequences: false)
            return text.utf8.count <= 317 && segments.count >= 3
                && segments.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") } }
        }

        static func isRecordKey(_ text: String) -> Bool {
            let bytes = text.utf8
            return (1...512).contains(bytes.count) && text != "." && text != ".."
                && bytes.allSatisfy { isAlphanumeric($0) || "._:~-".utf8.contains($0) }
        }

        static func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
    }
}
