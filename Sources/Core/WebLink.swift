import Foundation

/// A link a post, an attachment, an avatar or a video carries, kept as the text of an absolute URL.
///
/// A Foundation `URL` parses its text when it is made. A sync maps a few links for each post,
/// and its store only writes their text back out. So Core keeps the text and makes a `URL`
/// only when one is asked for (``url``). Over Mastodon and Bluesky pulls, the links' parses
/// and frees were 5–6% of the CPU (issue 40).
public struct WebLink: Hashable, Sendable, CustomStringConvertible {
    /// The URL's text, as `URL.absoluteString` gives it.
    public let absoluteString: String

    /// The link to `url`.
    public init(_ url: URL) {
        absoluteString = url.absoluteString
    }

    /// The link whose text is `text`, for a text that Foundation takes as it is: `URL(string:)`
    /// succeeds on it and gives it back as its `absoluteString`. IntegrationKit's `WebURL.link`
    /// makes links this way from texts it has checked. Any other text goes through a `URL`
    /// (``init(_:)``).
    public init(unparsed text: String) {
        absoluteString = text
    }

    /// The link as a Foundation `URL`, parsed now. Both initializers admit only texts that
    /// parse, so the fallback, `about:blank`, is never reached.
    public var url: URL {
        URL(string: absoluteString) ?? URL(string: "about:blank")!
    }

    public var description: String { absoluteString }
}
