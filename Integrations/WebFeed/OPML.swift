import Core
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads the subscription lists (OPML 1.0 and 2.0) that feed readers export: every
/// `<outline>` with an `xmlUrl`, at any depth, in document order.
public enum OPML {
    /// One subscription.
    public struct Subscription: Sendable, Equatable {
        /// The outline's `title`, else its `text`; `nil` when it has neither.
        public var title: String?
        /// The feed's URL: always absolute http(s).
        public var url: URL
    }

    /// The most subscriptions read from one file.
    public static let maxSubscriptions = 100_000

    /// - Throws: ``OPML/ReadError`` with the line and column where the file stops being OPML.
    public static func subscriptions(in data: Data) throws -> [Subscription] {
        let utf8: Data
        do {
            utf8 = try FeedEncoding.utf8(data)
            try XMLFeedParser.refuseEntityDeclarations(utf8)
        } catch let error as WebFeedParseError {
            throw ReadError(description: error.description)
        }
        let reader = Reader()
        let parser = XMLParser(data: utf8)
        parser.shouldResolveExternalEntities = false
        parser.delegate = reader
        if !parser.parse() || reader.error != nil {
            let reason = (parser.parserError as NSError?)?.localizedDescription ?? "it is not well-formed XML"
            throw ReadError(description: "line \(parser.lineNumber), column \(parser.columnNumber): "
                            + "not well-formed XML (\(Terminal.safe(reason.trimmingCharacters(in: .whitespacesAndNewlines), limit: 160)))")
        }
        guard reader.sawRoot else { throw ReadError(description: "it is XML but not OPML: the root element is not <opml>") }
        return reader.subscriptions
    }

    /// Why a file is not a list of subscriptions.
    public struct ReadError: Error, CustomStringConvertible {
        public var description: String
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var subscriptions: [Subscription] = []
        var sawRoot = false
        var depth = 0
        var error: (any Error)?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            depth += 1
            if depth == 1 { sawRoot = elementName == "opml" }
            guard elementName == "outline", subscriptions.count < OPML.maxSubscriptions,
                  let url = FeedText.httpURL(attributes["xmlUrl"] ?? attributes["xmlurl"], base: nil) else { return }
            let title = FeedText.singleLine(attributes["title"]) ?? FeedText.singleLine(attributes["text"])
            subscriptions.append(Subscription(title: title, url: url))
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if error == nil { error = parseError }
        }
    }
}
