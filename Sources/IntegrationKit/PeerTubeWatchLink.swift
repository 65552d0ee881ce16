import Foundation

/// A PeerTube watch URL, as posts link videos: `https://INSTANCE/w/SHORTUUID`,
/// `/videos/watch/UUID` or `/videos/embed/UUID`.
///
/// Here rather than in the PeerTube integration because the integrations that *find* such links
/// in their posts (Mastodon statuses, web feed entries) cannot import another integration; the
/// post then carries the watch URL as its video id, and a feed whose `"videos"` section names the
/// PeerTube integration resolves it.
public enum PeerTubeWatchLink {
    /// The instance (scheme, host, port) and the video's id (UUID, short UUID or number) of a
    /// watch URL; `nil` for any other URL.
    public static func parse(_ url: URL) -> (instance: URL, id: String)? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else { return nil }
        let parts = url.path.split(separator: "/").map(String.init)
        let id: String
        switch parts.count {
        case 2 where parts[0] == "w": id = parts[1]
        case 3 where parts[0] == "videos" && (parts[1] == "watch" || parts[1] == "embed"): id = parts[2]
        default: return nil
        }
        guard isVideoID(id) else { return nil }
        var components = URLComponents()
        components.scheme = scheme
        components.host = host
        components.port = url.port
        guard let instance = components.url else { return nil }
        return (instance, id)
    }

    /// The watch URLs among the `href="…"` links of `html`, in order, each once, at most `limit`
    /// (a post's markup is hostile: only the first 64 KiB are looked at).
    ///
    /// Read as bytes, and only a link whose text could hold a watch path (`/w/`, `/videos/`, or a
    /// percent escape that may decode to one) is parsed as a URL: most links of a status are
    /// mentions and hashtags, and parsing each was most of a Mastodon sync's CPU (issue 40). The
    /// markup is searched where it lies, with `memchr`: copying it out and walking it a byte at a
    /// time was 2–3% of a Mastodon pull's samples.
    public static func links(inHTML html: String, limit: Int = 8) -> [URL] {
        var html = html
        return html.withUTF8 { all in links(in: UnsafeBufferPointer(rebasing: all.prefix(64 * 1024)), limit: limit) }
    }

    private static func links(in bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> [URL] {
        var found: [URL] = []
        var from = 0
        while found.count < limit, let start = firstIndex(of: hrefMarker, in: bytes, from: from) {
            let valueStart = start + hrefMarker.count
            guard let end = firstIndex(of: quote, in: bytes, from: valueStart) else { break }
            from = end
            let value = UnsafeBufferPointer(rebasing: bytes[valueStart..<end])
            guard watchPathHints.contains(where: { firstIndex(of: $0, in: value, from: 0) != nil }) else { continue }
            var text = String(decoding: value, as: UTF8.self)
            if value.contains(UInt8(ascii: "&")) { text = text.replacingOccurrences(of: "&amp;", with: "&") }
            if let url = URL(string: text), parse(url) != nil, !found.contains(url) { found.append(url) }
        }
        return found
    }

    private static let hrefMarker = Array("href=\"".utf8)
    private static let quote = Array("\"".utf8)
    /// What the text of every link ``parse(_:)`` accepts contains at least one of.
    private static let watchPathHints = [Array("/w/".utf8), Array("/videos/".utf8), Array("%".utf8)]

    /// Where `needle` first starts in `bytes` at or after `from`, or `nil`: `memchr` finds each
    /// place its first byte is, `memcmp` checks the rest.
    private static func firstIndex(of needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let base = bytes.baseAddress, let first = needle.first, from >= 0, bytes.count - from >= needle.count else { return nil }
        let last = bytes.count - needle.count
        return needle.withUnsafeBufferPointer { needle in
            var index = from
            while index <= last {
                guard let hit = memchr(base + index, Int32(first), last - index + 1) else { return nil }
                let at = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if memcmp(base + at, needle.baseAddress!, needle.count) == 0 { return at }
                index = at + 1
            }
            return nil
        }
    }

    /// A UUID (36 characters, hex and dashes), a short UUID (base58, 20 to 24 characters) or a number.
    static func isVideoID(_ id: String) -> Bool {
        let utf8 = Array(id.utf8)
        if utf8.count == 36 { return utf8.allSatisfy { $0 == UInt8(ascii: "-") || ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) || ($0 >= 65 && $0 <= 70) } }
        if (1...12).contains(utf8.count), utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) { return true }
        let base58 = Set("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)
        return (20...24).contains(utf8.count) && utf8.allSatisfy(base58.contains)
    }
}
