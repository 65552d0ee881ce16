import Core
import Foundation

/// A URL a browser or player may open: absolute `http` or `https` only, with a host, so a post
/// cannot slip `javascript:` or `file:` into the mirror.
///
/// Foundation decides what a URL is. Most URLs in a timeline are plainly web URLs, and for those
/// the check reads the bytes itself: an `http://` or `https://` prefix, a host of letters, digits,
/// dots and hyphens, and nothing after it that Foundation would escape or refuse. Foundation
/// would parse such a text as it is, so `link(_:)` and `text(_:)` return it without building a
/// URL. Timed over a Bluesky pull, URL parsing and its scheme and host were 7% of the sync's CPU,
/// and later the parse of every link kept 5–6% (issue 40).
public enum WebURL {
    /// The text as a web link (``Core/WebLink``), or `nil` when it is not one. A text the byte
    /// check takes is kept as it is; any other is Foundation's to parse and to write back.
    public static func link(_ text: String) -> WebLink? {
        isPlainlyWeb(text) ? WebLink(unparsed: text) : checkedByFoundation(text).map(WebLink.init)
    }

    /// The text of the web link the text is (``link(_:)``'s `absoluteString`), or `nil` when it
    /// is not one: for a link that is only written out, as in a post's HTML.
    public static func text(_ text: String) -> String? {
        isPlainlyWeb(text) ? text : checkedByFoundation(text)?.absoluteString
    }

    /// Foundation's parse, then its scheme and host: for a text the byte check left to it.
    private static func checkedByFoundation(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host?.isEmpty == false else { return nil }
        return url
    }

    /// Whether the text is a web URL that Foundation takes as it is (see the type's comment).
    /// `false` says nothing: Foundation decides those.
    static func isPlainlyWeb(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(isPlainlyWeb) ?? false
    }

    private static func isPlainlyWeb(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        func skip(_ prefix: StaticString) -> Bool {
            prefix.withUTF8Buffer { prefix in
                guard bytes.count - index >= prefix.count else { return false }
                // `prefix` is lower case; a letter may come in either case.
                for offset in 0..<prefix.count where bytes[index + offset] != prefix[offset] {
                    guard (0x61...0x7A).contains(prefix[offset]), bytes[index + offset] | 0x20 == prefix[offset] else { return false }
                }
                index += prefix.count
                return true
            }
        }
        guard skip("http"), skip("s://") || skip("://") else { return false }
        // Read once: each use of the static would check its lazy initialization again (0.4% of a
        // Bluesky pull's samples).
        let byteClass = Self.byteClass
        let hostStart = index
        while index < bytes.count, byteClass[Int(bytes[index])] == .host { index += 1 }
        // The host ends at the path, the query or the fragment: a `:` or `@` after it is a port or
        // user information, left to Foundation.
        guard index > hostStart, index == bytes.count || "/?#".utf8.contains(bytes[index]) else { return false }
        var inFragment = false
        while index < bytes.count {
            switch byteClass[Int(bytes[index])] {
            case .host, .rest: index += 1
            case .percent:
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return false }
                index += 3
            case .hash:
                guard !inFragment else { return false }
                inFragment = true
                index += 1
            case .other: return false
            }
        }
        return true
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    private enum ByteClass { case host, rest, percent, hash, other }

    /// What each byte may be in a plain web URL: a host's letters, digits, `.` and `-`; after the
    /// host, those and the rest of RFC 3986's unreserved and reserved characters but `[`, `]`
    /// and `#`; `%` starting an escape; `#` starting the fragment.
    private static let byteClass: [ByteClass] = (0...255).map { byte -> ByteClass in
        switch UInt8(byte) {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "."), UInt8(ascii: "-"): return .host
        case UInt8(ascii: "%"): return .percent
        case UInt8(ascii: "#"): return .hash
        default:
            return "_~!$&'()*+,;=:@/?".utf8.contains(UInt8(byte)) ? .rest : .other
        }
    }
}
