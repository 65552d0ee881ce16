import Core
import Foundation
import IntegrationKit

/// Reads RSS 2.0 (and 0.9x), RSS 1.0 (RDF, and Netscape's RSS 0.90), Atom 1.0 and 0.3 with
/// ``XMLReader`` (libxml2).
///
/// The format is told by the root element and its namespace, not by the URL. Relative URLs
/// resolve against `xml:base` where the document sets it, else against the feed's own URL.
/// The reader's refusals hold: no entity declarations anywhere in the document, no DTD, no
/// network, a bounded and cancellable parse.
final class XMLFeedParser: XMLReaderDelegate {
    enum Namespace {
        static let atom = "http://www.w3.org/2005/Atom"
        static let rss1 = "http://purl.org/rss/1.0/"
        static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        static let content = "http://purl.org/rss/1.0/modules/content/"
        static let dc = "http://purl.org/dc/elements/1.1/"
        static let dcterms = "http://purl.org/dc/terms/"
        static let xml = "http://www.w3.org/XML/1998/namespace"
        static let media = "http://search.yahoo.com/mrss/"
        static let itunes = "http://www.itunes.com/dtds/podcast-1.0.dtd"
        static let youTube = "http://www.youtube.com/xml/schemas/2015"

        /// Older names of the same vocabularies, read as the names above: Atom 0.3's namespace
        /// (its elements are Atom 1.0's but for `issued`, `modified` and `created`, and `mode`
        /// on text), RSS 0.90's, and the RSS 2.0 namespace some feeds declare.
        static func canonical(_ namespace: String) -> String {
            switch namespace {
            case "": return ""
            // Atom 0.3, and the names its 2003 drafts went by (Echo, Pie).
            case "http://purl.org/atom/ns#", "http://purl.org/echo/", "http://purl.org/pie/", "http://example.com/necho": return atom
            case "http://my.netscape.com/rdf/simple/0.9/": return rss1
            case "http://backend.userland.com/rss2", "http://backend.userland.com/rss", "http://blogs.law.harvard.edu/tech/rss": return ""
            default: return namespace
            }
        }
    }

    /// The deepest nesting accepted; feeds are shallow, hostile documents need not be.
    static let maxDepth = 64
    /// The most entries kept from one document, newest (first) first.
    static let maxEntries = 10_000

    /// One open element.
    struct Frame {
        var namespace: String
        var name: String
        var attributes: [String: String]
        var base: URL?
        var language: String?
        var text = ""
    }

    private let feedURL: URL?
    private var stack: [Frame] = []
    private var format: WebFeedDocument.Format?
    /// Whether the root is a `<feed>` in no namespace: its unqualified elements are Atom's.
    private var unnamespacedAtom = false
    /// Whether the markup being kept was met unescaped in a text element, rather than Atom xhtml.
    private var nakedMarkup = false
    private var document: WebFeedDocument?
    /// The entry being read (internal for the Media RSS and podcast fields, in their own file).
    var entry: WebFeedEntry?
    private var author: WebFeedAuthor?
    /// Inside Atom `type="xhtml"` text: the depth of its element and the markup so far.
    private var xhtml: (depth: Int, markup: String)?
    /// Whether the entry's link so far is only its permalink guid, which a `<link>` replaces.
    private var pendingGuidLink = false

    private init(feedURL: URL?) { self.feedURL = feedURL }

    /// Parses a whole XML feed, in any encoding iconv knows, recovering what other readers recover.
    ///
    /// A document that is not well-formed XML is read again, when that helps: as windows-1252
    /// when it claims UTF-8 (or nothing) but is not UTF-8, then with libxml2's recovery after
    /// white space before the XML declaration, stray control characters and bare `&` are
    /// mended. The refusals hold throughout. What was done is in ``WebFeedDocument/notes``.
    /// - Parameters:
    ///   - httpCharset: the response's `charset`, which comes before the XML declaration.
    ///   - limits: the reader's bounds (tests shrink them).
    /// - Throws: ``WebFeedParseError`` with the line and column where the document stops being
    ///   well-formed (when nothing could be read) or was refused; `CancellationError` when the
    ///   task is cancelled meanwhile.
    static func parse(_ data: Data, feedURL: URL?, httpCharset: String? = nil,
                      limits: XMLReader.Limits = XMLReader.Limits()) throws -> WebFeedDocument {
        // The CPU bound is the document's, over every read of it: each attempt counts from here.
        let started = XMLReader.cpuTime()
        let decoded = try FeedEncoding.decode(data, httpCharset: httpCharset)
        var notes = decoded.note.map { [$0] } ?? []
        var utf8 = decoded.utf8
        let firstError: WebFeedParseError
        do {
            return try attempt(utf8, feedURL: feedURL, notes: notes, recovering: false, limits: limits, started: started)
        } catch let error as WebFeedParseError where error.isWellFormedness {
            firstError = error
        }
        if decoded.isUnconvertedUTF8, String(validating: utf8, as: UTF8.self) == nil {
            utf8 = FeedEncoding.windows1252Fallback(utf8)
            notes.append("the document is \(decoded.encoding == "utf-8" ? "taken as" : "declared") UTF-8 but is not valid UTF-8; "
                         + "it was read as windows-1252")
            do {
                return try attempt(utf8, feedURL: feedURL, notes: notes, recovering: false, limits: limits, started: started)
            } catch let error as WebFeedParseError where error.isWellFormedness {}
        }
        // Recovery counts only when it reads items: a document of which nothing can be read
        // stays the error the strict parse met.
        let mended = XMLMending.mend(utf8)
        let recovered: WebFeedDocument
        do {
            recovered = try attempt(mended, feedURL: feedURL, notes: notes + [firstError.description + "; it was read with recovery"],
                                    recovering: true, limits: limits, started: started)
        } catch let error as WebFeedParseError where error.isWellFormedness || error.reason == emptyReason {
            throw firstError
        }
        guard !recovered.entries.isEmpty else { throw firstError }
        return recovered
    }

    private static let emptyReason = "the document is empty"

    private static func attempt(_ utf8: Data, feedURL: URL?, notes: [String], recovering: Bool,
                                limits: XMLReader.Limits, started: Double) throws -> WebFeedDocument {
        let reader = XMLFeedParser(feedURL: feedURL)
        var limits = limits
        limits.cpuSpent += XMLReader.cpuTime() - started
        let read: XMLReader.Notes
        do {
            read = try XMLReader.read(utf8, into: reader, recovering: recovering, limits: limits)
        } catch var error as WebFeedParseError {
            error.reason = error.reason.replacingOccurrences(of: "the document is not well-formed", with: "the feed is not well-formed")
            throw error
        }
        guard var document = reader.document else { throw WebFeedParseError(reason: emptyReason) }
        document.notes = notes
        // A strict read that still had to mend something (an undeclared prefix) says so too.
        if !recovering, let mended = read.recovered { document.notes.append(mended + "; it was read with recovery") }
        return document
    }

    // MARK: XMLReaderDelegate

    func reader(_ reader: XMLReader, didStartElement elementName: String, namespace: String, attributes: [String: String]) {
        var namespace = Namespace.canonical(namespace)
        // A <feed> root that declares no namespace is Atom that forgot it, and so is what it holds.
        if stack.isEmpty, namespace.isEmpty, elementName == "feed" { unnamespacedAtom = true }
        if namespace.isEmpty, unnamespacedAtom { namespace = Namespace.atom }
        guard stack.count < Self.maxDepth else { return reader.stop("elements nest more than \(Self.maxDepth) deep") }
        if xhtml == nil, let parent = stack.last, stack.count >= 2, Self.holdsText(parent) {
            // Markup written unescaped in a text element (`<title>An <b>bold</b> claim</title>`)
            // is kept as markup, as other readers keep it, not dropped with the child's text.
            xhtml = (stack.count, HTMLText.escape(parent.text))
            nakedMarkup = true
        }
        if var open = xhtml {
            stack.append(Frame(namespace: namespace, name: elementName, attributes: attributes, base: currentBase, language: currentLanguage))
            guard Self.hasRoom(open.markup) else { return }
            // Markup inside Atom xhtml text is kept as markup, minus namespace prefixes.
            open.markup += "<" + elementName
            for (key, value) in attributes.sorted(by: { $0.key < $1.key }) where !key.hasPrefix("xmlns") {
                let resolved = (key == "href" || key == "src") ? (FeedTextURL.resolve(value, base: currentBase) ?? value) : value
                open.markup += " \(key)=\"\(HTMLText.escape(resolved))\""
            }
            open.markup += ">"
            xhtml = open
            return
        }
        let parentBase = stack.last?.base ?? feedURL
        let base = attributes["xml:base"].flatMap { URL(string: $0, relativeTo: parentBase)?.absoluteURL } ?? parentBase
        let language = attributes["xml:lang"] ?? stack.last?.language
        stack.append(Frame(namespace: namespace, name: elementName, attributes: attributes, base: base, language: language))

        if stack.count == 1 {
            switch (namespace, elementName) {
            case ("", "rss"): format = .rss2
            case (Namespace.rdf, "RDF"): format = .rss1
            case (Namespace.atom, "feed"): format = .atom
            default:
                return reader.stop("the document is XML but not a feed: its root element is <\(Terminal.safe(elementName, limit: 40))>"
                            + (namespace.isEmpty ? "" : " in \(Terminal.safe(namespace, limit: 80))"))
            }
            document = WebFeedDocument(format: format!)
            return
        }
        switch (namespace, elementName) {
        case ("", "item"), (Namespace.rss1, "item"), (Namespace.atom, "entry"):
            if entry == nil {
                entry = WebFeedEntry()
                pendingGuidLink = false
                if namespace == Namespace.rss1 { entry?.id = FeedText.clean(attributes["rdf:about"]) }
                entry?.language = language
            }
        case (Namespace.atom, "author"), (Namespace.atom, "contributor"):
            author = WebFeedAuthor()
        case (Namespace.atom, "content"), (Namespace.atom, "summary"), (Namespace.atom, "title"):
            // Atom 0.3 says application/xhtml+xml, with mode="xml" (its default).
            if attributes["type"] == "xhtml" || attributes["type"] == "application/xhtml+xml" && (attributes["mode"] ?? "xml") == "xml" {
                xhtml = (stack.count, "")
            }
        default:
            break
        }
    }

    func reader(_ reader: XMLReader, foundText text: String) { append(text) }

    private func append(_ string: String) {
        if var open = xhtml {
            guard Self.hasRoom(open.markup) else { return }
            open.markup += HTMLText.escape(string)
            xhtml = open
            return
        }
        guard !stack.isEmpty else { return }
        let room = FeedText.maxContentBytes + 4 - stack[stack.count - 1].text.utf8.count
        guard room > 0 else { return }
        // Past the limit the text is cut (FeedText.content trims it to a character boundary).
        stack[stack.count - 1].text += string.utf8.count <= room ? string : String(decoding: string.utf8.prefix(room), as: UTF8.self)
    }

    func reader(_ reader: XMLReader, didEndElement elementName: String, namespace: String) {
        guard let frame = stack.popLast() else { return }
        if let open = xhtml {
            if stack.count + 1 > open.depth {
                if Self.hasRoom(open.markup) { xhtml?.markup += "</\(elementName)>" }
                return
            }
            xhtml = nil
            var markup = open.markup
            // Atom wraps xhtml in one <div>, which is not part of the content (RFC 4287 §3.1.1.3).
            if markup.hasPrefix("<div"), markup.hasSuffix("</div>"), let close = markup.firstIndex(of: ">") {
                markup = String(markup[markup.index(after: close)..<markup.index(markup.endIndex, offsetBy: -6)])
            }
            var done = frame
            done.text = markup
            if nakedMarkup, frame.name == "title" {
                // A title is one line of text: the markup read as text.
                done.text = HTMLText.plainText(markup)
                nakedMarkup = false
                end(done, isHTML: false)
                return
            }
            nakedMarkup = false
            end(done, isHTML: true)
            return
        }
        end(frame, isHTML: false)
    }

    private var currentBase: URL? { stack.last?.base ?? feedURL }
    private var currentLanguage: String? { stack.last?.language }

    /// Whether the parent element is the item or entry itself (not a nested source or author).
    var inEntryDirectly: Bool {
        guard entry != nil, let parent = stack.last else { return false }
        return parent.name == "item" || parent.name == "entry"
    }

    private var inChannelDirectly: Bool {
        guard entry == nil, let parent = stack.last else { return false }
        return parent.name == "channel" || (parent.name == "feed" && parent.namespace == Namespace.atom)
    }

    /// Files a closed element's text where it belongs.
    private func end(_ frame: Frame, isHTML xhtmlMarkup: Bool) {
        let text = frame.text
        switch (frame.namespace, frame.name) {
        case ("", "item"), (Namespace.rss1, "item"), (Namespace.atom, "entry"):
            if let entry, (document?.entries.count ?? 0) < Self.maxEntries { document?.entries.append(entry) }
            entry = nil
            return
        case (Namespace.atom, "author"), (Namespace.atom, "contributor"):
            if let author, frame.name == "author", author.name != nil || author.email != nil || author.uri != nil {
                if entry != nil { if inEntryDirectly { entry?.authors.append(author) } } else if inChannelDirectly { document?.authors.append(author) }
            }
            author = nil
            return
        default:
            break
        }
        if author != nil, frame.namespace == Namespace.atom {
            switch frame.name {
            case "name": author?.name = FeedText.singleLine(text)
            case "email": author?.email = FeedText.singleLine(text)
            case "uri": author?.uri = FeedText.httpURL(text, base: frame.base)
            default: break
            }
            return
        }
        if entry != nil {
            if endMediaField(frame) { return }
            guard inEntryDirectly else { return }
            endEntryField(frame, xhtmlMarkup: xhtmlMarkup)
        } else if inChannelDirectly {
            endFeedField(frame, xhtmlMarkup: xhtmlMarkup)
        }
    }

    private func endFeedField(_ frame: Frame, xhtmlMarkup: Bool) {
        switch (frame.namespace, frame.name) {
        case ("", "title"), (Namespace.rss1, "title"), (Namespace.dc, "title"):
            if document?.title == nil { document?.title = FeedText.singleLine(frame.text) }
        case (Namespace.atom, "title"):
            document?.title = atomText(frame, xhtmlMarkup: xhtmlMarkup).plain.flatMap(FeedText.singleLine)
        case ("", "link"), (Namespace.rss1, "link"):
            if document?.link == nil { document?.link = FeedText.httpURL(frame.text, base: frame.base) }
        case (Namespace.atom, "link"):
            let rel = frame.attributes["rel"] ?? "alternate"
            if rel == "alternate", document?.link == nil { document?.link = FeedText.httpURL(frame.attributes["href"], base: frame.base) }
        case (Namespace.dc, "creator"), ("", "managingEditor"), (Namespace.itunes, "author"):
            if let name = FeedText.singleLine(frame.text), document?.authors.isEmpty == true { document?.authors.append(Self.rssAuthor(name)) }
        case (Namespace.itunes, "image"):
            // Read before the write: `document?.x = … ?? document?.x` is a simultaneous access (a crash).
            if let image = FeedText.httpURL(frame.attributes["href"], base: frame.base) { document?.podcastImage = image }
        default:
            break
        }
    }

    private func endEntryField(_ frame: Frame, xhtmlMarkup: Bool) {
        let text = frame.text
        switch (frame.namespace, frame.name) {
        // Identity
        case ("", "guid"):
            entry?.id = FeedText.clean(text)
            // A guid is a permalink unless it says otherwise (RSS 2.0); stand in for a missing link.
            if frame.attributes["isPermaLink"]?.lowercased() != "false", entry?.link == nil,
               let id = entry?.id, id.hasPrefix("http://") || id.hasPrefix("https://") {
                entry?.link = FeedText.httpURL(id, base: nil)
                pendingGuidLink = true
            }
        case (Namespace.atom, "id"):
            entry?.id = FeedText.clean(text)
        // Title and link
        case ("", "title"), (Namespace.rss1, "title"), (Namespace.dc, "title"):
            if entry?.title == nil { entry?.title = FeedText.singleLine(text) }
        case (Namespace.atom, "title"):
            entry?.title = atomText(frame, xhtmlMarkup: xhtmlMarkup).plain.flatMap(FeedText.singleLine)
        case ("", "link"), (Namespace.rss1, "link"):
            if entry?.link == nil || pendingGuidLink, let link = FeedText.httpURL(text, base: frame.base) {
                entry?.link = link
                pendingGuidLink = false
            }
        case (Namespace.atom, "link"):
            let rel = frame.attributes["rel"] ?? "alternate"
            guard let href = FeedText.httpURL(frame.attributes["href"], base: frame.base) else { return }
            if rel == "alternate" {
                if entry?.link == nil { entry?.link = href }
            } else if rel == "enclosure" {
                entry?.enclosures.append(WebFeedEnclosure(url: href, type: FeedText.clean(frame.attributes["type"], limit: 200),
                                                          length: frame.attributes["length"].flatMap(Self.length),
                                                          title: FeedText.singleLine(frame.attributes["title"])))
            }
        // Content
        case (Namespace.content, "encoded"):
            entry?.html = FeedText.content(text).map { HTMLLinks.resolve($0, base: frame.base) }
        case ("", "description"), (Namespace.rss1, "description"):
            if entry?.html == nil { entry?.html = FeedText.content(text).map { HTMLLinks.resolve($0, base: frame.base) } }
        case (Namespace.atom, "content"):
            let content = atomText(frame, xhtmlMarkup: xhtmlMarkup)
            guard frame.attributes["src"] == nil else { return }
            entry?.html = content.html
            entry?.plainText = content.html == nil ? content.plain : nil
        case (Namespace.atom, "summary"):
            // The summary stands in only where the entry has no content.
            guard entry?.html == nil, entry?.plainText == nil else { return }
            let content = atomText(frame, xhtmlMarkup: xhtmlMarkup)
            entry?.html = content.html
            entry?.plainText = content.html == nil ? content.plain : nil
        // Dates
        case ("", "pubDate"), (Namespace.atom, "published"), (Namespace.atom, "issued"):
            entry?.published = FeedDate.date(from: text)
        case (Namespace.dcterms, "issued"), (Namespace.dcterms, "created"), (Namespace.dcterms, "date"):
            if entry?.published == nil { entry?.published = FeedDate.date(from: text) }
        case (Namespace.dcterms, "modified"):
            if entry?.updated == nil { entry?.updated = FeedDate.date(from: text) }
        case (Namespace.atom, "created"):
            // Atom 0.3: when the entry was created, which its `issued` (if any) overrides.
            if entry?.published == nil { entry?.published = FeedDate.date(from: text) }
        case (Namespace.dc, "date"):
            if entry?.published == nil { entry?.published = FeedDate.date(from: text) }
        case (Namespace.atom, "updated"), (Namespace.atom, "modified"):
            entry?.updated = FeedDate.date(from: text)
        // People and files
        case (Namespace.dc, "creator"), ("", "author"):
            if let name = FeedText.singleLine(text) { entry?.authors.append(Self.rssAuthor(name)) }
        case ("", "enclosure"):
            guard let url = FeedText.httpURL(frame.attributes["url"], base: frame.base) else { return }
            entry?.enclosures.append(WebFeedEnclosure(url: url, type: FeedText.clean(frame.attributes["type"], limit: 200),
                                                      length: frame.attributes["length"].flatMap(Self.length), title: nil))
        case ("", "category"), (Namespace.dc, "subject"):
            if let term = FeedText.singleLine(text) { entry?.categories.append(term) }
        case (Namespace.atom, "category"):
            if let term = FeedText.singleLine(frame.attributes["term"]) { entry?.categories.append(term) }
        default:
            break
        }
    }
}
