import Foundation

/// Reads any web feed, telling the format from the content: JSON Feed when the body is a JSON
/// object, else RSS 2.0, RSS 1.0 or Atom by the XML root element.
enum WebFeedParser {
    /// - Parameters:
    ///   - feedURL: the URL the body came from, against which relative links resolve.
    ///   - contentType: the response's `Content-Type`, whose `charset` comes before the XML declaration's.
    /// - Throws: ``WebFeedParseError``; `CancellationError` when the task is cancelled meanwhile.
    static func parse(_ data: Data, feedURL: URL?, contentType: String? = nil) throws -> WebFeedDocument {
        var start = data.startIndex
        if data.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
        while start < data.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(data[start]) { start += 1 }
        guard start < data.endIndex else { throw WebFeedParseError(reason: "the feed is empty") }
        if data[start] == UInt8(ascii: "{") { return try JSONFeedParser.parse(data, feedURL: feedURL) }
        return try XMLFeedParser.parse(data, feedURL: feedURL, httpCharset: FeedEncoding.charset(ofContentType: contentType))
    }
}
