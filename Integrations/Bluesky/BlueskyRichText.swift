import Foundation

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
        var html = "<p>"
        var position = 0
        for facet in facets.sorted(by: { $0.byteStart < $1.byteStart }) {
            let (start, end) = (facet.byteStart, facet.byteEnd)
            guard start >= position, start < end, end <= bytes.count, isBoundary(start), isBoundary(end),
                  let anchor = facet.features.lazy.compactMap(href).first else { continue }
            appendText(bytes[position..<start], to: &html)
            html += "<a href=\"\(escape(anchor))\">"
            appendText(bytes[start..<end], to: &html)
            html += "</a>"
            position = end
        }
        appendText(bytes[position...], to: &html)
        return html + "</p>"
    }

    /// Where a feature points, or `nil` for one that cannot be linked safely.
    static func href(_ feature: BlueskyFacet.Feature) -> String? {
        switch feature {
        case .link(let uri): return webURL(uri)?.absoluteString
        case .mention(let did): return BlueskyIdentifier.isDID(did) ? "https://bsky.app/profile/\(did)" : nil
        case .tag(let tag):
            guard !tag.isEmpty, tag.utf8.count <= 640, !tag.contains(where: \.isWhitespace),
                  let escaped = tag.addingPercentEncoding(withAllowedCharacters: .alphanumerics) else { return nil }
            return "https://bsky.app/hashtag/\(escaped)"
        }
    }

    private static func appendText(_ bytes: ArraySlice<UInt8>, to html: inout String) {
        guard !bytes.isEmpty else { return }
        let escaped = escape(String(decoding: bytes, as: UTF8.self))
        html += bytes.contains(0x0A) ? escaped.replacingOccurrences(of: "\n", with: "<br>") : escaped
    }

    static func escape(_ text: String) -> String {
        // Most text has nothing to escape: one scan, no copy.
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
