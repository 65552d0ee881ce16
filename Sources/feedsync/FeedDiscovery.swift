import Foundation

/// Finds the feeds a web page names in its head, for `feedsync add https://site/`:
/// `<link rel="alternate" type="application/rss+xml" href="…">` (or Atom, or JSON Feed).
///
/// - Note: the webfeed integration is gaining discovery of its own (#23); when it lands, this
///   is the one function to point at it.
enum FeedDiscovery {
    /// The feed types a page announces.
    static let types: Set<String> = ["application/rss+xml", "application/atom+xml", "application/feed+json"]

    /// The page's feed links in document order, resolved against `base` (or the page's
    /// `<base href>`), http(s) only, without repeats; at most `limit`.
    static func feedLinks(in html: String, base: URL, limit: Int = 20) -> [URL] {
        var base = base
        var found: [URL] = []
        for tag in tags(in: html) {
            let attributes = self.attributes(of: tag.attributes)
            if tag.name == "base", let href = attributes["href"], let url = URL(string: href, relativeTo: base)?.absoluteURL {
                base = url
                continue
            }
            guard tag.name == "link", let rel = attributes["rel"], let href = attributes["href"], !href.isEmpty,
                  rel.lowercased().split(whereSeparator: \.isWhitespace).contains("alternate"),
                  let type = attributes["type"]?.lowercased().split(separator: ";").first?.trimmingCharacters(in: .whitespaces),
                  types.contains(type),
                  let url = URL(string: href.trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: base)?.absoluteURL,
                  ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil,
                  !found.contains(url) else { continue }
            found.append(url)
            if found.count == limit { break }
        }
        return found
    }

    /// `<link …>` and `<base …>` tags: their lower-cased name and the text of their attributes.
    private static func tags(in html: String) -> [(name: String, attributes: Substring)] {
        var tags: [(String, Substring)] = []
        var rest = html[...]
        while let open = rest.firstIndex(of: "<") {
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: ">") else { break }
            let inside = rest[afterOpen..<close]
            let name = inside.prefix { $0.isLetter }.lowercased()
            if name == "link" || name == "base" { tags.append((name, inside.dropFirst(name.count))) }
            // The body holds no feed links worth trusting, and a page may be megabytes of it.
            if name == "body" { break }
            rest = rest[rest.index(after: close)...]
        }
        return tags
    }

    /// `name="value"`, `name='value'` and `name=value` pairs, names lower-cased, `&amp;` and
    /// the like decoded in values.
    private static func attributes(of text: Substring) -> [String: String] {
        var attributes: [String: String] = [:]
        var rest = text
        while true {
            rest = rest.drop { $0.isWhitespace || $0 == "/" }
            let name = rest.prefix { !$0.isWhitespace && $0 != "=" && $0 != "/" }
            guard !name.isEmpty else { break }
            rest = rest.dropFirst(name.count).drop(while: \.isWhitespace)
            var value = ""
            if rest.first == "=" {
                rest = rest.dropFirst().drop(while: \.isWhitespace)
                if let quote = rest.first, quote == "\"" || quote == "'" {
                    let body = rest.dropFirst()
                    let end = body.firstIndex(of: quote) ?? body.endIndex
                    value = String(body[..<end])
                    rest = end < body.endIndex ? body[body.index(after: end)...] : body[end...]
                } else {
                    let raw = rest.prefix { !$0.isWhitespace }
                    value = String(raw)
                    rest = rest.dropFirst(raw.count)
                }
            }
            let key = name.lowercased()
            if attributes[key] == nil { attributes[key] = decodeEntities(value) }
        }
        return attributes
    }

    private static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
