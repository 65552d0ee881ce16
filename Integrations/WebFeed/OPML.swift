import Core
import Foundation

/// Reads the subscription lists (OPML 1.0 and 2.0) that feed readers export: every
/// `<outline>` with an `xmlUrl`, at any depth, in document order; an outline with only an
/// `htmlUrl` (a site, not its feed) is a subscription to that page, whose feed a pull
/// discovers as it does for any feed `url` that answers with HTML.
public enum OPML {
    /// One subscription.
    public struct Subscription: Sendable, Equatable {
        /// The outline's `title`, else its `text`; `nil` when it has neither.
        public var title: String?
        /// The feed's URL (or the site's, for ``isSite``): always absolute http(s).
        public var url: URL
        /// Whether the outline named only its site (`htmlUrl`), so the feed is found on that page.
        public var isSite = false
    }

    /// The most subscriptions read from one file.
    public static let maxSubscriptions = 100_000

    /// The largest file read, in bytes.
    public static let maxBytes = 64 << 20

    /// Reads with ``XMLReader`` (libxml2), under the refusals it keeps for feeds: no entity
    /// declarations anywhere, no DTD, no network, a bounded and cancellable parse.
    ///
    /// - Throws: ``OPML/ReadError`` with the line and column where the file stops being OPML;
    ///   `CancellationError` when the task is cancelled meanwhile.
    public static func subscriptions(in data: Data) throws -> [Subscription] {
        guard data.count <= maxBytes else {
            throw ReadError(description: "the file is \(data.count) bytes, larger than the \(maxBytes >> 20) MiB an OPML file may be")
        }
        let reader = Reader()
        do {
            try XMLReader.read(try FeedEncoding.decode(data).utf8, into: reader)
        } catch let error as WebFeedParseError {
            throw ReadError(description: error.description)
        }
        guard reader.sawRoot else { throw ReadError(description: "it is XML but not OPML: the root element is not <opml>") }
        return reader.subscriptions
    }

    /// Why a file is not a list of subscriptions.
    public struct ReadError: Error, CustomStringConvertible {
        public var description: String
    }

    private final class Reader: XMLReaderDelegate {
        var subscriptions: [Subscription] = []
        var sawRoot = false
        var depth = 0

        func reader(_ reader: XMLReader, didStartElement elementName: String, namespace: String, attributes: [String: String]) {
            depth += 1
            if depth == 1 { sawRoot = elementName == "opml" }
            guard elementName == "outline", subscriptions.count < OPML.maxSubscriptions else { return }
            let feed = FeedText.httpURL(attributes["xmlUrl"] ?? attributes["xmlurl"], base: nil)
            // Only an outline that names no feed at all stands for its site: one whose xmlUrl is
            // not an http(s) URL is not a subscription.
            let site = attributes["xmlUrl"] == nil && attributes["xmlurl"] == nil
                ? FeedText.httpURL(attributes["htmlUrl"] ?? attributes["htmlurl"], base: nil) : nil
            guard let url = feed ?? site else { return }
            let title = FeedText.singleLine(attributes["title"]) ?? FeedText.singleLine(attributes["text"])
            subscriptions.append(Subscription(title: title, url: url, isSite: feed == nil))
        }

        func reader(_ reader: XMLReader, didEndElement elementName: String, namespace: String) {
            depth -= 1
        }

        func reader(_ reader: XMLReader, foundText text: String) {}
    }
}
