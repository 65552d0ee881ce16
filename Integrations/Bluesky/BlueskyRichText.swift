import Foundation
import IntegrationKit

/// Renders a post's text and facets as HTML: links, mentions and hashtags become anchors, the
/// rest is escaped text with `<br>` for line breaks, all in one `<p>`.
///
/// Facets address the text by UTF-8 byte offsets (not characters, not UTF-16 units). A facet
/// that falls outside the text, overlaps the one before it, or cuts a character's bytes apart
/// is left out and its text stays plain: clients get offsets wrong, and the text still stands.
enum BlueskyRichText {
    static func html(_ text: String, facets: [BlueskyFacet]) -> String {
        let bytes = Array(text.utf8)
        func isBoundary(_ index: Int) -> Bool { index == bytes.count || bytes[index] & 0xC0 != 0x80 }
        // Built as bytes: this runs for every post, and String appends cost more than the rest.
        var html: [UInt8] = []
        html.reserveCapacity(bytes.count + 32)
        html.append(contentsOf: "<p>".utf8)
        var position = 0
        for facet in facets.sorted(by: { $0.byteStart < $1.byteStart }) {
            let (start, end) = (facet.byteStart, facet.byteEnd)
            guard start >= position, start < end, end <= bytes.count, isBoundary(start), isBoundary(end),
                  let anchor = facet.features.lazy.compactMap(href).first else { continue }
            appendEscaped(bytes[position..<start], to: &html)
            html.append(contentsOf: "<a href=\"".utf8)
            appendEscaped(Array(anchor.utf8)[...], to: &html, lineBreaks: false)
            html.append(contentsOf: "\">".utf8)
            appendEscaped(bytes[start..<end], to: &html)
            html.append(contentsOf: "</a>".utf8)
            position = end
        }
        appendEscaped(bytes[position...], to: &html)
        html.append(contentsOf: "</p>".utf8)
        return String(decoding: html, as: UTF8.self)
    }

    /// Where a feature points, or `nil` for one that cannot be linked safely.
    static func href(_ feature: BlueskyFacet.Feature) -> String? {
        switch feature {
        case .link(let uri): return uri.utf8.count <= BlueskyBounds.maxURLBytes ? WebURL.text(uri) : nil
        case .mention(let did): return BlueskyIdentifier.isDID(did) ? "https://bsky.app/profile/\(did)" : nil
        case .tag(let tag):
            guard !tag.isEmpty, tag.utf8.count <= 640 else { return nil }
            if tag.utf8.allSatisfy({ $0 < 0x80 }) { return asciiTagURL(tag) }
            guard !tag.contains(where: \.isWhitespace),
                  let escaped = tag.addingPercentEncoding(withAllowedCharacters: .alphanumerics) else { return nil }
            return "https://bsky.app/hashtag/\(escaped)"
        }
    }

    /// A tag of ASCII only, escaped as Foundation's `.alphanumerics` escapes it (every byte but
    /// `[A-Za-z0-9]` as `%XX`), on the bytes: a tag is on most posts, and Foundation's
    /// character sets cost more than the rest of the post's HTML. `nil` for one with whitespace.
    static func asciiTagURL(_ tag: String) -> String? {
        var url = Array("https://bsky.app/hashtag/".utf8)
        url.reserveCapacity(url.count + tag.utf8.count * 3)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in tag.utf8 {
            switch byte {
            case 0x09...0x0D, 0x20: return nil
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: url.append(byte)
            default: url.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
        return String(decoding: url, as: UTF8.self)
    }

    /// Appends text escaped for HTML, with `<br>` for each line break: the runs of bytes between
    /// the ones escaped are copied whole.
    private static func appendEscaped(_ bytes: ArraySlice<UInt8>, to html: inout [UInt8], lineBreaks: Bool = true) {
        var run = bytes.startIndex
        for index in bytes.indices {
            let escaped: StaticString
            switch bytes[index] {
            case UInt8(ascii: "&"): escaped = "&amp;"
            case UInt8(ascii: "<"): escaped = "&lt;"
            case UInt8(ascii: ">"): escaped = "&gt;"
            case UInt8(ascii: "\""): escaped = "&quot;"
            case UInt8(ascii: "'"): escaped = "&#39;"
            case UInt8(ascii: "\n") where lineBreaks: escaped = "<br>"
            default: continue
            }
            html.append(contentsOf: bytes[run..<index])
            escaped.withUTF8Buffer { html.append(contentsOf: $0) }
            run = index + 1
        }
        html.append(contentsOf: bytes[run...])
    }
}
