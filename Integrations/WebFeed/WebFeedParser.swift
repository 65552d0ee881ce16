import Foundation

/// Reads any web feed, telling the format from the content: JSON Feed when the body is a JSON
/// object, else RSS 2.0, RSS 1.0 or Atom by the XML root element.
enum WebFeedParser {
    /// - Parameter feedURL: the URL the body came from, against which relative links resolve.
    /// - Throws: ``WebFeedParseError``.
    static func parse(_ data: Data, feedURL: URL?) throws -> WebFeedDocument {
        var start = data.startIndex
        if data.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
        while start < data.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(data[start]) { start += 1 }
        guard start < data.endIndex else { throw WebFeedParseError(reason: "the feed is empty") }
        if data[start] == UInt8(ascii: "{") { return try JSONFeedParser.parse(data, feedURL: feedURL) }
        return try XMLFeedParser.parse(data, feedURL: feedURL)
    }
}
