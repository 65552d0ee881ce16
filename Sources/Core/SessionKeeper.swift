/// Keeps each feed's login session between runs.
///
/// Sessions hold tokens: a store keeps them apart from the mirror it lets others read.
public protocol SessionKeeper: Sendable {
    /// The session saved for a feed, if the backend that issued it is `backend`.
    func session(ofFeed feed: String, backend: String) async throws -> Session?

    /// Saves a feed's session, issued by `backend`, so the next run can reuse it.
    func saveSession(_ session: Session, ofFeed feed: String, backend: String) async throws
}
