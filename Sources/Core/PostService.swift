/// A backend's feed, read as pages of changes.
public protocol PostService: Sendable {
    /// Fetches the changes that follow `cursor`, oldest first.
    ///
    /// - Parameters:
    ///   - cursor: where the previous page ended; `nil` to start at the beginning of the feed.
    ///   - session: the tokens from the ``AuthenticationService``; `nil` for a backend that has
    ///     none (a public web feed), which never fakes one.
    /// - Returns: a page whose unreadable items are dropped into ``FeedPage/skipped``; when
    ///   nothing changed since `cursor`, an empty page that ends where it started.
    /// - Throws: ``ServiceError`` — `.unauthorized` when the session is rejected,
    ///   `.rateLimited`, `.unavailable`, `.invalidResponse` when the page as a whole cannot be read.
    func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage
}
