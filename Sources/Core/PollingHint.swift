import Foundation

/// What a backend asks of the poller beyond the page itself: a polite web server's
/// `Cache-Control: max-age` or `Retry-After`, a feed that moved for good, or one that is gone.
public struct PollingHint: Hashable, Sendable {
    /// Do not poll again before this (a lower bound; the feed's interval may be later).
    public var notBefore: Date?
    /// Where the feed is now read from, when the server moved it permanently (301/308) or the
    /// configured address was a page that names it (``discoveredFrom``).
    public var location: String?
    /// The HTML page ``location`` was found on, when the feed was discovered there rather than
    /// moved by its server.
    public var discoveredFrom: String?
    /// Why polling stops until the feed's config changes (HTTP 410 Gone), as one sentence.
    public var stopped: String?

    public init(notBefore: Date? = nil, location: String? = nil, discoveredFrom: String? = nil, stopped: String? = nil) {
        self.notBefore = notBefore
        self.location = location
        self.discoveredFrom = discoveredFrom
        self.stopped = stopped
    }
}
