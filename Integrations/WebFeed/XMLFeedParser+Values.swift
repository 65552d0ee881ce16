import Foundation
import IntegrationKit

/// How the parser reads the values of a few elements: Atom text constructs (1.0's `type`, 0.3's
/// `mode`), RSS authors and enclosure lengths.
extension XMLFeedParser {
    /// Whether markup being gathered may grow: past the content limit (and a little slack, since
    /// the content is cut at a character boundary later) the rest is dropped as it comes, so a
    /// hostile document cannot make one field hold its whole size several times over.
    static func hasRoom(_ markup: String) -> Bool { markup.utf8.count <= FeedText.maxContentBytes + 4 }

    /// The elements whose content is text or escaped markup (a title, a description, Atom's
    /// content and summary), in which a child element is markup a feed forgot to escape.
    static func holdsText(_ frame: Frame) -> Bool {
        switch (frame.namespace, frame.name) {
        case ("", "title"), ("", "description"), (Namespace.rss1, "title"), (Namespace.rss1, "description"),
             (Namespace.atom, "title"), (Namespace.atom, "summary"), (Namespace.content, "encoded"):
            return true
        case (Namespace.atom, "content"):
            // Atom content of an XML media type holds XML, not text.
            let type = frame.attributes["type"]?.lowercased() ?? "text"
            return ["text", "html", "text/plain", "text/html"].contains(type)
        default:
            return false
        }
    }

    /// Atom text: `type="text"` (the default) is plain, `html` is escaped markup, `xhtml` inline markup.
    func atomText(_ frame: Frame, xhtmlMarkup: Bool) -> (html: String?, plain: String?) {
        if xhtmlMarkup {
            let html = FeedText.content(frame.text)
            return (html, html.map(HTMLText.plainText))
        }
        var text = frame.text
        let type = frame.attributes["type"]?.lowercased()
        // Atom 0.3's mode="base64", and Atom 1.0's media types that are neither text nor XML
        // (RFC 4287 §4.1.3.3), hold the content base64-encoded: kept only when it is text.
        if frame.attributes["mode"]?.lowercased() == "base64" || type.map(Self.isBase64Type) == true {
            text = Data(base64Encoded: text, options: .ignoreUnknownCharacters).flatMap { String(validating: $0, as: UTF8.self) } ?? ""
        }
        switch type {
        case "html", "text/html", "application/xhtml+xml":
            let html = FeedText.content(text).map { HTMLLinks.resolve($0, base: frame.base) }
            return (html, html.map(HTMLText.plainText))
        case .none where frame.attributes["mode"]?.lowercased() == "escaped":
            // Atom 0.3 with no type is text/plain, but escaped text is in practice HTML.
            let html = FeedText.content(text).map { HTMLLinks.resolve($0, base: frame.base) }
            return (html, html.map(HTMLText.plainText))
        default:
            return (nil, FeedText.content(text))
        }
    }

    /// A media type whose content Atom carries in base64: one that is not `text/*` nor XML.
    static func isBase64Type(_ type: String) -> Bool {
        type.contains("/") && !type.hasPrefix("text/") && !type.hasSuffix("+xml") && !type.hasSuffix("/xml")
            && !type.hasSuffix("/xml-external-parsed-entity") && !type.hasSuffix("/xml-dtd")
    }

    /// An RSS `author` is an email, often `jane@example.com (Jane Doe)`; `dc:creator` a name.
    static func rssAuthor(_ text: String) -> WebFeedAuthor {
        if let open = text.firstIndex(of: "("), text.hasSuffix(")") {
            let email = text[..<open].trimmingCharacters(in: .whitespaces)
            let name = text[text.index(after: open)..<text.index(before: text.endIndex)].trimmingCharacters(in: .whitespaces)
            return WebFeedAuthor(name: name.isEmpty ? nil : name, email: email.contains("@") ? email : nil, uri: nil)
        }
        if text.contains("@"), !text.contains(" ") { return WebFeedAuthor(name: nil, email: text, uri: nil) }
        return WebFeedAuthor(name: text, email: nil, uri: nil)
    }

    /// An enclosure's `length`: a byte count, or nothing when it is not one (feeds write 0 or junk).
    static func length(_ text: String) -> Int64? {
        guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), value > 0 else { return nil }
        return value
    }
}
