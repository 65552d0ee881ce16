import Foundation
import IntegrationKit

/// An http(s) URL in the one spelling `feedsync add` compares addresses by, so one page or feed
/// written several ways is fetched, and added, once.
///
/// The normalizations are RFC 3986's that cannot change what a server answers (§6.2.2 syntax,
/// §6.2.3 scheme-based): scheme and host in lower case; the scheme's default port dropped
/// (`:80` for http, `:443` for https); an empty path is `/`; percent-encodings in upper case,
/// and those of unreserved characters (`A–Z a–z 0–9 - . _ ~`) decoded; `.` and `..` segments
/// removed (§5.2.4); the fragment dropped (it never reaches the server). The query stays as
/// written, and so does the case of the path.
///
///     NormalizedURL(URL(string: "HTTP://Example.COM:80/a/./b/../%7euser#top")!)?.description
///     // "http://example.com/a/~user"
public struct NormalizedURL: Hashable, Sendable, CustomStringConvertible {
    public let description: String

    /// The normalized form of an absolute http(s) URL; `nil` for anything else.
    public init?(_ url: URL) {
        guard let origin = Origin(url), let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        var path = Self.removingDotSegments(Self.normalizingPercentEncoding(components.percentEncodedPath))
        if path.isEmpty { path = "/" }
        let user = components.percentEncodedUser.map { user in
            user + (components.percentEncodedPassword.map { ":" + $0 } ?? "") + "@"
        } ?? ""
        let query = components.percentEncodedQuery.map { "?" + Self.normalizingPercentEncoding($0) } ?? ""
        let authority = origin.description.dropFirst(origin.scheme.count + 3)
        description = "\(origin.scheme)://\(user)\(authority)\(path)\(query)"
    }

    /// The normalized form of `text`, when it is an absolute http(s) URL.
    public init?(string text: String) {
        guard let url = URL(string: text) else { return nil }
        self.init(url)
    }

    /// `%7e` → `~`, `%2f` → `%2F`: unreserved characters decoded, other escapes in upper case.
    static func normalizingPercentEncoding(_ text: String) -> String {
        guard text.contains("%") else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                let byte = high << 4 | low
                if isUnreserved(byte) {
                    out.append(byte)
                } else {
                    out += [UInt8(ascii: "%"), hexDigit(high), hexDigit(low)]
                }
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 §5.2.4 for an absolute path: `/a/./b/../c` → `/a/c`.
    static func removingDotSegments(_ path: String) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.contains(where: { $0 == "." || $0 == ".." }) else { return path }
        var output: [Substring] = []
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if output.count > 1 { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        let joined = output.joined(separator: "/")
        return joined.hasPrefix("/") ? joined : "/" + joined
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 { Array("0123456789ABCDEF".utf8)[Int(value)] }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}
