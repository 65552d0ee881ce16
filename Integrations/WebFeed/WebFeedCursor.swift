import Core
import Foundation

/// Where a web feed's polling stands, kept as JSON in ``Core/FeedCursor/position``; only this
/// integration reads it.
///
/// It holds the URL as configured (a changed config starts afresh: a gone feed is polled again),
/// the URL now polled (after permanent redirects), the validators for a conditional GET, the
/// first-seen times of items that carry no date, and why polling stopped, if it did.
struct WebFeedCursor: Codable, Equatable {
    var configured: String
    var url: String
    var etag: String?
    var lastModified: String?
    /// Items without a date keep the time they were first seen, in ms since 1970, by id.
    var firstSeen: [String: Int64] = [:]
    /// Set after a 410 Gone.
    var gone: String?
    /// The HTML page the polled feed was found on, when the configured URL was a page.
    var discoveredFrom: String?

    /// The most undated items remembered.
    static let maxFirstSeen = 5_000

    init(configured: URL) {
        self.configured = configured.absoluteString
        self.url = configured.absoluteString
    }

    /// The stored state, or a fresh one when there is none, it is not ours, or the configured
    /// URL has changed since.
    init(_ cursor: FeedCursor?, configured: URL) {
        guard let cursor, let state = try? JSONDecoder().decode(WebFeedCursor.self, from: Data(cursor.position.utf8)),
              state.configured == configured.absoluteString, URL(string: state.url) != nil else {
            self.init(configured: configured)
            return
        }
        self = state
    }

    var feedCursor: FeedCursor {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and integers cannot fail.
        let json = String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
        return FeedCursor(position: json, validator: etag ?? lastModified)
    }
}
