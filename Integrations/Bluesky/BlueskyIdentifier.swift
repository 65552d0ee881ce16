import Core
import Foundation
import IntegrationKit

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
        bytes(of: text) { isDID($0[...]) }
    }

    /// A domain-like handle: labels of letters, digits and inner hyphens, at least two of them.
    static func isHandle(_ text: String) -> Bool {
        bytes(of: text) { isHandle($0[...]) }
    }

    /// An `at://authority/collection/rkey` URI, optionally of one collection; `nil` for anything else.
    static func atURI(_ text: String, collection expected: String? = nil) -> ATURI? {
        // Checked on the bytes, with no copy until the parts are known good: this runs for every
        // post, reply, quote and repost.
        bytes(of: text) { bytes -> ATURI? in
            let scheme = "at://".utf8
            guard bytes.count <= 8_192, bytes.starts(with: scheme) else { return nil }
            let rest = bytes[scheme.count...]
            guard let first = rest.firstIndex(of: slash), let second = rest[(first + 1)...].firstIndex(of: slash),
                  !rest[(second + 1)...].contains(slash) else { return nil }
            let (authority, collection, key) = (rest[..<first], rest[(first + 1)..<second], rest[(second + 1)...])
            if let expected {
                guard collection.elementsEqual(expected.utf8) else { return nil }
            } else {
                guard isNSID(collection) else { return nil }
            }
            guard isDID(authority) || isHandle(authority), isRecordKey(key) else { return nil }
            return ATURI(authority: String(decoding: authority, as: UTF8.self), collection: String(decoding: collection, as: UTF8.self),
                         recordKey: String(decoding: key, as: UTF8.self))
        }
    }

    /// A collection name: dotted segments of letters, digits and hyphens (`app.bsky.feed.post`).
    static func isNSID(_ text: String) -> Bool {
        bytes(of: text) { isNSID($0[...]) }
    }

    /// A record key: 1–512 of `[A-Za-z0-9._:~-]`, not `.` or `..`.
    static func isRecordKey(_ text: String) -> Bool {
        bytes(of: text) { isRecordKey($0[...]) }
    }

    // The checks themselves, on UTF-8 bytes. Every byte they accept is ASCII, so a string that
    // passes is the same text as the bytes.

    private static func isDID(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        let prefix = "did:".utf8
        guard bytes.count <= maxDIDLength, bytes.starts(with: prefix), bytes.last != colon else { return false }
        let rest = bytes[(bytes.startIndex + prefix.count)...]
        guard let separator = rest.firstIndex(of: colon), separator > rest.startIndex, separator < rest.endIndex - 1 else { return false }
        return rest[..<separator].allSatisfy { (0x61...0x7A).contains($0) }
            && rest[(separator + 1)...].allSatisfy { isAlphanumeric($0) || isOneOf($0, ".:_%-") }
    }

    private static func isHandle(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maxHandleLength else { return false }
        var labels = 0
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: dot) ?? bytes.endIndex
            let label = bytes[start..<end]
            guard (1...63).contains(label.count), label.first != hyphen, label.last != hyphen,
                  label.allSatisfy({ isAlphanumeric($0) || $0 == hyphen }) else { return false }
            labels += 1
            guard end < bytes.endIndex else { return labels >= 2 }
            start = end + 1
        }
    }

    private static func isNSID(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        guard bytes.count <= 317 else { return false }
        var segments = 0
        var start = bytes.startIndex
        while true {
            let end = bytes[start...].firstIndex(of: dot) ?? bytes.endIndex
            guard end > start, bytes[start..<end].allSatisfy({ isAlphanumeric($0) || $0 == hyphen }) else { return false }
            segments += 1
            guard end < bytes.endIndex else { return segments >= 3 }
            start = end + 1
        }
    }

    private static func isRecordKey(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        (1...512).contains(bytes.count) && !bytes.elementsEqual(".".utf8) && !bytes.elementsEqual("..".utf8)
            && bytes.allSatisfy { isAlphanumeric($0) || isOneOf($0, "._:~-") }
    }

    private static let (slash, colon, dot, hyphen) = (UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"))

    /// Whether `byte` is one of `set`'s ASCII characters.
    private static func isOneOf(_ byte: UInt8, _ set: StaticString) -> Bool {
        set.withUTF8Buffer { $0.contains(byte) }
    }

    /// `body` over the text's UTF-8 bytes, in place when the string is stored contiguously (a
    /// native string always is).
    private static func bytes<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}

/// A link a browser or player may open (``WebURL``) of at most ``BlueskyBounds/maxURLBytes``, so
/// a post cannot slip `javascript:`, `file:` or a megabyte of URL into the mirror. Kept as text
/// (``Core/WebLink``), without a `URL` parse where none is needed.
func webLink(_ text: String?) -> WebLink? {
    guard let text, text.utf8.count <= BlueskyBounds.maxURLBytes else { return nil }
    return WebURL.link(text)
}
