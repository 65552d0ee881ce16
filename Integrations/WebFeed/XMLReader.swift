import CLibXML2
import Core
import Foundation
import IntegrationKit

/// What a document's elements and text are handed to, in document order.
protocol XMLReaderDelegate: AnyObject {
    /// An element opens. `namespace` is its namespace URI, `""` for none; attribute keys are
    /// qualified names as written (`href`, `xml:base`, `rdf:about`).
    func reader(_ reader: XMLReader, didStartElement name: String, namespace: String, attributes: [String: String])
    func reader(_ reader: XMLReader, didEndElement name: String, namespace: String)
    /// Character data, CDATA included, in as many pieces as the parser likes.
    func reader(_ reader: XMLReader, foundText text: String)
}

/// Reads XML with libxml2's SAX2 push parser, fed in chunks, under the refusals that keep a
/// hostile document cheap.
///
/// - **No entity declarations.** A document that declares an entity, general or parameter,
///   anywhere in its internal subset, is refused at the declaration by the parser's own
///   `entityDecl` callback, before any reference to it is read. No DTD is loaded (an external
///   subset is neither fetched nor read), entities are never substituted (`XML_PARSE_NOENT` is
///   off) and the parser has no network (`XML_PARSE_NONET`).
/// - **No reference is dropped.** XML's five and character references read as XML says; HTML
///   4's 253 named characters (`&nbsp;`, `&eacute;`…) read as their characters; any other name
///   stays in the text as written (`&name;`).
/// - **Bounded and stoppable.** The document is fed ``Limits/chunkBytes`` at a time (so no
///   single-chunk limit applies: every document up to the response cap is read, and
///   `XML_PARSE_HUGE` lifts libxml2's 10,000,000-byte limit on one text or attribute, which
///   feedsync's own bounds replace); between
///   chunks the task's cancellation and the parse's CPU time are checked. An element with more
///   than ``Limits/maxAttributes`` attributes is refused before libxml2 reads it, since its
///   duplicate-attribute check takes time quadratic in their number.
/// - **Errors in words.** The first error libxml2 reports becomes one sentence with its line
///   and column, never a bare error number.
final class XMLReader {
    struct Limits {
        /// The bytes handed to libxml2 at a time; cancellation is checked between them.
        var chunkBytes = 64 * 1024
        /// The CPU time one document may take, in seconds, checked between chunks.
        var cpuSeconds: Double = 10
        /// The CPU time earlier reads of the same document took (a recovering read after a
        /// strict one): the bound is for the document, not for each read.
        var cpuSpent: Double = 0
        /// The most attributes one element may carry.
        var maxAttributes = 10_000
    }

    /// What the reader noticed without refusing the document.
    struct Notes {
        /// The first thing recovered from, in words with its line and column, when the
        /// document was not well-formed XML but could be read.
        var recovered: String?
    }

    /// Held strongly: a reader lives only for the call to ``read(_:into:recovering:limits:)``,
    /// and a weak reference cost a lookup per callback.
    private let delegate: any XMLReaderDelegate
    private let recovers: Bool
    private var context: xmlParserCtxtPtr?
    private var failure: WebFeedParseError?
    /// libxml2's first error, kept until the parse tells whether it was fatal.
    private var firstError: (message: String, line: Int, column: Int)?
    private var notes = Notes()
    /// Names and namespace URIs by the pointer of libxml2's interned copy.
    private var names: [UnsafeRawPointer: String] = [:]
    /// The entities handed to libxml2 for references, by name: text and attribute kinds differ.
    private var textEntities: [String: xmlEntityPtr] = [:]
    private var attributeEntities: [String: xmlEntityPtr] = [:]
    private var scan = AttributeScan()

    private init(delegate: any XMLReaderDelegate, recovers: Bool) {
        self.delegate = delegate
        self.recovers = recovers
    }

    deinit {
        for entity in Array(textEntities.values) + Array(attributeEntities.values) {
            free(UnsafeMutableRawPointer(mutating: entity.pointee.name))
            free(entity.pointee.content)
            free(entity)
        }
    }

    /// Reads `data` (UTF-8: its declared encoding is ignored) to the end, handing each element
    /// and text to `delegate`.
    ///
    /// - Parameter recovering: read on past well-formedness errors (libxml2's recovery); the
    ///   first is returned in ``Notes/recovered``. The refusals above hold either way.
    /// - Throws: ``WebFeedParseError`` with line and column; `CancellationError` when the
    ///   task is cancelled while it reads.
    @discardableResult
    static func read(_ data: Data, into delegate: any XMLReaderDelegate, recovering: Bool = false, limits: Limits = Limits()) throws -> Notes {
        _ = libraryInitialized
        let reader = XMLReader(delegate: delegate, recovers: recovering)
        var handler = xmlSAXHandler()
        handler.initialized = XML_SAX2_MAGIC
        handler.startElementNs = { user, localname, prefix, uri, _, _, count, _, attributes in
            XMLReader.from(user).start(localname, prefix, uri, count, attributes)
        }
        handler.endElementNs = { user, localname, prefix, uri in XMLReader.from(user).end(localname, prefix, uri) }
        handler.characters = { user, bytes, count in XMLReader.from(user).text(bytes, count) }
        handler.cdataBlock = { user, bytes, count in XMLReader.from(user).text(bytes, count) }
        handler.getEntity = { user, name in XMLReader.from(user).entity(named: name) }
        handler.entityDecl = { user, name, _, _, _, _ in XMLReader.from(user).refuseEntityDeclaration(name) }
        handler.serror = { user, error in XMLReader.from(user).record(error) }
        guard let context = xmlCreatePushParserCtxt(&handler, Unmanaged.passUnretained(reader).toOpaque(), nil, 0, nil) else {
            throw WebFeedParseError(reason: "the XML parser could not be started (out of memory)")
        }
        defer { xmlFreeParserCtxt(context) }
        reader.context = context
        var options = XML_PARSE_NONET.rawValue | XML_PARSE_HUGE.rawValue | XML_PARSE_IGNORE_ENC.rawValue | XML_PARSE_NOWARNING.rawValue
        if recovering { options |= XML_PARSE_RECOVER.rawValue }
        xmlCtxtUseOptions(context, Int32(options))
        let started = cpuTime()
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < raw.count {
                if Task.isCancelled { throw CancellationError() }
                let end = min(offset + limits.chunkBytes, raw.count)
                let chunk = UnsafeRawBufferPointer(rebasing: raw[offset..<end])
                if let refusal = reader.scan.read(chunk, maxAttributes: limits.maxAttributes) {
                    throw WebFeedParseError(reason: refusal, line: reader.line, column: nil)
                }
                xmlParseChunk(context, chunk.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(chunk.count), 0)
                try reader.check()
                if cpuTime() - started + limits.cpuSpent > limits.cpuSeconds {
                    throw WebFeedParseError(reason: "the document takes more than \(Int(limits.cpuSeconds)) seconds of CPU to read, "
                                            + "the most one document may take", line: reader.line, column: nil)
                }
                offset = end
            }
        }
        xmlParseChunk(context, nil, 0, 1)
        try reader.check()
        return reader.notes
    }

    /// The thread's CPU time in seconds: what a parse has cost, whatever else the machine runs.
    /// A read runs on one thread from start to end (it never suspends), so this is its own.
    static func cpuTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// libxml2's global state, set up once before any parse: feeds are parsed on several
    /// threads at once, and libxml2 2.9 wants `xmlInitParser` called before that happens
    /// (a `static let` runs its initializer exactly once, thread-safely).
    private static let libraryInitialized: Void = xmlInitParser()

    private static func from(_ user: UnsafeMutableRawPointer?) -> XMLReader {
        Unmanaged<XMLReader>.fromOpaque(user!).takeUnretainedValue()
    }

    /// The line the parser has reached.
    var line: Int { context.map { Int(xmlSAX2GetLineNumber($0)) } ?? 0 }
    var column: Int { context.map { Int(xmlSAX2GetColumnNumber($0)) } ?? 0 }

    /// Stops the parse with `reason`, at the parser's current line and column.
    func stop(_ reason: String) {
        guard failure == nil else { return }
        failure = WebFeedParseError(reason: reason, line: line, column: column)
        if let context { xmlStopParser(context) }
    }

    /// Throws what stopped the parse, if anything did.
    private func check() throws {
        if let failure { throw failure }
        guard let context else { return }
        if context.pointee.wellFormed == 0 {
            let error = firstError ?? (message: "it stops early", line: line, column: column)
            guard recovers else {
                throw WebFeedParseError(reason: "the document is not well-formed XML (\(error.message))", line: error.line, column: error.column,
                                        isWellFormedness: true)
            }
            if notes.recovered == nil { notes.recovered = "line \(error.line), column \(error.column): \(error.message)" }
        }
    }

    // MARK: Callbacks

    private func name(_ pointer: UnsafePointer<xmlChar>) -> String {
        if let known = names[UnsafeRawPointer(pointer)] { return known }
        let name = String(cString: pointer)
        names[UnsafeRawPointer(pointer)] = name
        return name
    }

    /// The namespace of an element or attribute; an undeclared prefix that feeds commonly use
    /// undeclared (`dc:`, `media:`…) gets its usual namespace, any other a name of its own.
    private func namespace(_ uri: UnsafePointer<xmlChar>?, prefix: UnsafePointer<xmlChar>?) -> String {
        if let uri { return name(uri) }
        guard let prefix else { return "" }
        let written = name(prefix)
        if notes.recovered == nil { notes.recovered = "line \(line): the prefix \(Terminal.safeName(written)) is used without being declared" }
        return Self.usualNamespaces[written] ?? "urn:feedsync:undeclared:\(written)"
    }

    static let usualNamespaces = [
        "atom": "http://www.w3.org/2005/Atom", "content": "http://purl.org/rss/1.0/modules/content/",
        "dc": "http://purl.org/dc/elements/1.1/", "media": "http://search.yahoo.com/mrss/",
        "itunes": "http://www.itunes.com/dtds/podcast-1.0.dtd", "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
        "yt": "http://www.youtube.com/xml/schemas/2015", "georss": "http://www.georss.org/georss",
        "slash": "http://purl.org/rss/1.0/modules/slash/", "wfw": "http://wellformedweb.org/CommentAPI/",
        "sy": "http://purl.org/rss/1.0/modules/syndication/", "dcterms": "http://purl.org/dc/terms/",
    ]

    private func start(_ localname: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?,
                       _ count: Int32, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard failure == nil, let localname else { return }
        var values: [String: String] = [:]
        if count > 0, let attributes {
            values.reserveCapacity(Int(count))
            for index in 0..<Int(count) {
                let base = index * 5
                guard let local = attributes[base], let start = attributes[base + 3], let end = attributes[base + 4] else { continue }
                let key = attributes[base + 1].map { name($0) + ":" + name(local) } ?? name(local)
                let bytes = UnsafeBufferPointer(start: start, count: start.distance(to: end))
                values[key] = bytes.contains(UInt8(ascii: "&")) ? Self.decodeAttribute(bytes) : String(decoding: bytes, as: UTF8.self)
            }
        }
        delegate.reader(self, didStartElement: name(localname), namespace: namespace(uri, prefix: prefix), attributes: values)
    }

    private func end(_ localname: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?) {
        guard failure == nil, let localname else { return }
        delegate.reader(self, didEndElement: name(localname), namespace: namespace(uri, prefix: prefix))
    }

    private func text(_ bytes: UnsafePointer<xmlChar>?, _ count: Int32) {
        guard failure == nil, let bytes, count > 0 else { return }
        delegate.reader(self, foundText: String(decoding: UnsafeBufferPointer(start: bytes, count: Int(count)), as: UTF8.self))
    }

    private func refuseEntityDeclaration(_ name: UnsafePointer<xmlChar>?) {
        let shown = name.map { Terminal.safeName(String(cString: $0)) } ?? "an entity"
        stop("the document declares the XML entity \(shown); feedsync reads no document that declares entities")
    }

    /// Keeps libxml2's first error for ``check()``, which knows whether the parse went on.
    private func record(_ error: xmlErrorPtr?) {
        guard let error, firstError == nil, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue,
              error.pointee.domain != Int32(XML_FROM_NAMESPACE.rawValue) else { return }
        firstError = (Self.phrase(code: Int(error.pointee.code), message: error.pointee.message.map { String(cString: $0) }),
                      Int(error.pointee.line), Int(error.pointee.int2))
    }

    /// libxml2's error, in words: the usual ones in feedsync's, any other in libxml2's own.
    static func phrase(code: Int, message: String?) -> String {
        switch code {
        case 76, 85: return "an end tag does not match its start tag"
        case 5: return "there is more after the end of the root element"
        case 77, 73: return "the document ends before its elements are closed"
        case 23, 26, 27, 68: return "a bare '&' or an entity reference without its ';'"
        case 38, 39, 40, 41, 65: return "a malformed attribute"
        case 9: return "a character that XML does not allow"
        case 4: return "there is no XML document"
        case 64: return "the XML declaration is not at the very start"
        case 31, 32: return "bytes that are not in the document's encoding"
        default:
            let text = FeedText.singleLine(message) ?? ""
            return text.isEmpty ? "the parser stops here" : Terminal.safe(text, limit: 160)
        }
    }

    // MARK: Entities

    /// The entity libxml2 reads for `&name;`: text gets the character (or the reference as
    /// written, for a name HTML does not know) through libxml2's predefined-entity path, which
    /// inlines its content without parsing it; an attribute gets the reference back as written,
    /// for ``decodeAttribute(_:)``. Neither is ever parsed as markup, so nothing expands further.
    private func entity(named pointer: UnsafePointer<xmlChar>?) -> xmlEntityPtr? {
        guard let pointer, let context else { return nil }
        let name = String(cString: pointer)
        let inAttribute = context.pointee.instate == XML_PARSER_ATTRIBUTE_VALUE
        if let known = inAttribute ? attributeEntities[name] : textEntities[name] { return known }
        let text = Self.htmlCharacter(name) ?? "&\(name);"
        let entity = calloc(1, MemoryLayout<xmlEntity>.size)!.assumingMemoryBound(to: xmlEntity.self)
        entity.pointee.type = XML_ENTITY_DECL
        entity.pointee.name = UnsafePointer(strdup(name)!.withMemoryRebound(to: xmlChar.self, capacity: 1) { $0 })
        entity.pointee.content = strdup(text)!.withMemoryRebound(to: xmlChar.self, capacity: 1) { $0 }
        entity.pointee.length = Int32(text.utf8.count)
        entity.pointee.etype = inAttribute ? XML_INTERNAL_GENERAL_ENTITY : XML_INTERNAL_PREDEFINED_ENTITY
        // Marked as checked, so libxml2 does not parse the content looking for problems.
        entity.pointee.checked = 2
        if inAttribute { attributeEntities[name] = entity } else { textEntities[name] = entity }
        return entity
    }

    /// What HTML's named character reference `&name;` stands for (``HTMLEntities``, the
    /// WHATWG standard's table, the one the HTML renderer reads).
    static func htmlCharacter(_ name: String) -> String? {
        HTMLEntities.character(named: name)
    }

    /// An attribute value as libxml2 gives it without entity substitution: every `&` the
    /// document meant is `&#38;`, and `&name;` is a reference to look up.
    static func decodeAttribute(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let raw = String(decoding: bytes, as: UTF8.self)
        var out = ""
        var rest = raw[...]
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semicolon = after.prefix(40).firstIndex(of: ";") {
                let name = after[..<semicolon]
                if name == "#38" {
                    out += "&"
                } else if let character = htmlCharacter(String(name)) {
                    out.append(character)
                } else {
                    out += rest[amp...semicolon]
                }
                rest = after[after.index(after: semicolon)...]
            } else {
                out += "&"
                rest = after
            }
        }
        return out + rest
    }
}
