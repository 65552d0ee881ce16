import Foundation
import IntegrationKit

/// Finds the feeds an HTML page names, as browsers and feed readers do: `<link rel="alternate">`
/// of type RSS, Atom or JSON Feed, in document order, resolved against the page's `<base href>`
/// or its own URL.
enum FeedDiscovery {
    /// The types of a feed link.
    static let feedTypes: Set<String> = ["application/rss+xml", "application/atom+xml", "application/feed+json", "application/rdf+xml"]
    /// Links are in the head: only this much of a page is searched.
    static let maxSearchedBytes = 1 << 20

    /// Whether a body is an HTML page rather than a feed: by its start, or by a `text/html`
    /// type when it does not start as XML or JSON does.
    static func isHTML(_ body: Data, contentType: String?) -> Bool {
        var head = Substring(String(decoding: body.prefix(1024), as: UTF8.self).lowercased())
        if head.hasPrefix("\u{FEFF}") { head = head.dropFirst() }
        head = head.drop(while: { $0.isWhitespace })
        // An XML declaration (XHTML) and comments before the root say nothing either way.
        if head.hasPrefix("<?xml"), let end = head.range(of: "?>") {
            let rest = head[end.upperBound...].drop(while: { $0.isWhitespace })
            if rest.hasPrefix("<html") { return true }
            // A feed may carry an XHTML doctype by mistake: its root element decides.
            if rest.hasPrefix("<!doctype html") { return !startsAsFeed(rootElement(after: rest)) }
        }
        while head.hasPrefix("<!--"), let end = head.range(of: "-->") { head = head[end.upperBound...].drop(while: { $0.isWhitespace }) }
        if head.hasPrefix("<html") { return true }
        if head.hasPrefix("<!doctype html") { return !startsAsFeed(rootElement(after: head)) }
        let type = contentType?.lowercased() ?? ""
        // A feed served as text/html (a common misconfiguration) still starts as a feed does.
        return type.hasPrefix("text/html") && !["<?xml", "<rss", "<feed", "<rdf", "<!doctype", "{"].contains(where: { head.hasPrefix($0) })
    }

    /// The text from the first element that is not a declaration, comment or processing instruction.
    private static func rootElement(after text: Substring) -> Substring {
        var rest = text
        while let open = rest.firstIndex(of: "<") {
            let tag = rest[open...]
            if tag.hasPrefix("<!--"), let end = tag.range(of: "-->") { rest = tag[end.upperBound...]; continue }
            if tag.hasPrefix("<!") || tag.hasPrefix("<?"), let end = tag.firstIndex(of: ">") { rest = tag[tag.index(after: end)...]; continue }
            return tag
        }
        return ""
    }

    /// Whether lower-cased text starts with a feed's root element.
    private static func startsAsFeed(_ text: Substring) -> Bool {
        ["<rss", "<feed", "<rdf:rdf"].contains(where: { text.hasPrefix($0) })
    }

    /// The feed URLs `html` links to in its head, first first; only absolute http(s) URLs. A
    /// link in the body is not taken: anyone who may post on the page may write one there.
    static func feedLinks(in html: Data, pageURL: URL) -> [URL] {
        var text = String(decoding: html.prefix(maxSearchedBytes), as: UTF8.self)
        if let body = text.firstRange(of: /(?i)<body[\s>]/) { text = String(text[..<body.lowerBound]) }
        var base: URL?
        var links: [String] = []
        for match in text.matches(of: /(?i)<(link|base)\b([^>]*)>/) {
            let attributes = Self.attributes(String(match.output.2))
            if match.output.1.lowercased() == "base" {
                // The first <base> counts, for every URL of the page.
                if base == nil, let href = attributes["href"], let url = FeedText.httpURL(href, base: pageURL) { base = url }
                continue
            }
            let rel = (attributes["rel"] ?? "").lowercased().split(whereSeparator: { $0.isWhitespace })
            let type = (attributes["type"] ?? "").lowercased().split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard rel.contains("alternate"), feedTypes.contains(type), let href = attributes["href"] else { continue }
            links.append(href)
        }
        var seen = Set<URL>()
        return links.compactMap { FeedText.httpURL(HTMLEntities.decode($0, inAttribute: true), base: base ?? pageURL) }.filter { seen.insert($0).inserted }
    }

    /// A tag's attributes by lower-case name: quoted or bare values.
    static func attributes(_ text: String) -> [String: String] {
        var found: [String: String] = [:]
        for match in text.matches(of: /([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/) {
            let value = match.output.2 ?? match.output.3 ?? match.output.4 ?? ""
            let name = match.output.1.lowercased()
            if found[name] == nil { found[name] = String(value) }
        }
        return found
    }
}
