/// The part of the store that tells a live source where its stream had got to
/// (``FeedPage/streamPosition``, committed with the page it produced).
public protocol StreamPositionReader: Sendable {
    /// The stream position last committed with a page of the feed; `nil` when none was.
    func streamPosition(ofFeed feed: String) async throws -> String?
}
