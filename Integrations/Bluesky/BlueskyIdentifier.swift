import Foundation

/// Checks the AT Protocol's identifiers (DIDs, handles, `at://` URIs) before they become ids,
/// keys or parts of a URL: every one comes from a server and may be anything.
enum BlueskyIdentifier {
    /// An `at://` URI split into its parts.
    struct ATURI: Equatable {
        /// The repository: a DID (or, in URIs people write, a handle).
        var authority: String
        var collection: String
        var recordKey: String
    }

    /// The longest DID the spec allows (2 KiB), and the longest handle (253, as a domain name).
    static let maxDIDLength = 2_048
    static let maxHandleLength = 253

    /// `did:<method>:<id>`: a lower-case method and an id of `[A-Za-z0-9._:%-]`, not ending in `:`.
    static func isDID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count <= maxDIDLength, text.hasPrefix("did:"), bytes.last != UInt8(ascii: ":") else { return false }
        let rest = bytes.dropFirst(4)
        guard let colon = rest.firstIndex(of: UInt8(ascii: ":")), colon > rest.startIndex, colon < rest.endIndex - 1 else { return false }
        guard rest[rest.startIndex..<colon].allSatisfy({ (0x61...0x7A).contains($0) }) else { return false }
        return rest[(colon + 1)...].allSatisfy { isAlphanumeric($0) || ".:_%-".utf8.contains($0) }
    }

    /// A domain-like handle: labels of letters, digits and inner hyphens, at least two of them.
    static func isHandle(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= maxHandleLength else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            let bytes = Array(label.utf8)
            return (1...63).contains(bytes.count) && bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") }
                && bytes.first != UInt8(ascii: "-") && bytes.last != UInt8(ascii: "-")
        }
    }

    /// An `at://authority/collection/rkey` URI, optionally of one collection; `nil` for anything else.
    static func atURI(_ text: String, collection expected: String? = nil) -> ATURI? {
        // One pass over the bytes: this runs for every post, reply, quote and repost.
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
        return ATURI(authority: authority, collection: collection, recordKey: key)
    }

    /// A collection name: dotted segments of letters, digits and hyphens (`app.bsky.feed.post`).
    static func isNSID(_ text: String) -> Bool {
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.utf8.count <= 317 && segments.count >= 3
            && segments.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") } }
    }

    /// A record key: 1–512 of `[A-Za-z0-9._:~-]`, not `.` or `..`.
    static func isRecordKey(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...512).contains(bytes.count) && text != "." && text != ".."
            && bytes.allSatisfy { isAlphanumeric($0) || "._:~-".utf8.contains($0) }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}

/// A URL a browser or player may open: absolute `http` or `https` only, with a host and at most
/// 8 KiB, so a post cannot slip `javascript:`, `file:` or a megabyte of URL into the mirror.
func webURL(_ text: String?) -> URL? {
    guard let text, text.utf8.count <= 8_192, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
          scheme == "http" || scheme == "https", url.host?.isEmpty == false else { return nil }
    return url
}
