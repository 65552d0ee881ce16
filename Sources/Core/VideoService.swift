/// A video host that describes videos by id.
public protocol VideoService: Sendable {
    /// Looks up videos in one batch.
    ///
    /// - Returns: the videos the host knows, in any order; an id it does not know is simply
    ///   absent, and its post keeps the id as unresolved.
    /// - Throws: ``ServiceError`` `.unavailable` (or `.rateLimited`) when the host cannot
    ///   answer now; nothing is resolved then, and the caller retries on a later sync.
    func videos(withIDs ids: [VideoID]) async throws -> [Video]
}
