import Foundation

/// Makes the relative `href` and `src` values of an item's markup absolute, against the
/// `xml:base` or feed URL in force where the markup appeared: the HTML is read far from the feed.
enum HTMLLinks {
    static func resolve(_ html: String, base: URL?) -> String {
        guard let base, FeedText.contains("href=", in: html) || FeedText.contains("src=", in: html) else { return html }
        var out = ""
        out.reserveCapacity(html.utf8.count)
        var rest = html[...]
        while let match = rest.firstMatch(of: /(?i)\s(href|src)\s*=\s*(["'])/) {
            out += rest[..<match.range.upperBound]
            let quote = match.output.2
            let valueStart = match.range.upperBound
            guard let valueEnd = rest[valueStart...].firstIndex(where: { String($0) == quote }) else {
                rest = rest[valueStart...]
                break
            }
            let value = String(rest[valueStart..<valueEnd])
            out += absolute(value, base: base)
            rest = rest[valueEnd...]
        }
        out += rest
        return out
    }

    /// A relative reference resolved; an absolute one, a fragment, or one that does not parse as it was.
    private static func absolute(_ value: String, base: URL) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.contains(":") && !trimmed.hasPrefix("/") { return value }
        guard let url = URL(string: trimmed.replacingOccurrences(of: "&amp;", with: "&"), relativeTo: base)?.absoluteURL else { return value }
        return url.absoluteString.replacingOccurrences(of: "&", with: "&amp;")
    }
}
