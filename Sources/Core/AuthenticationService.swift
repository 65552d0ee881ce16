/// Logs in to a backend and keeps its tokens fresh.
public protocol AuthenticationService: Sendable {
    /// Logs in with the configured credentials.
    ///
    /// - Throws: ``ServiceError`` `.unauthorized` when the credentials are rejected.
    func logIn() async throws -> Session

    /// Exchanges a session for a fresh one without the password.
    ///
    /// - Throws: ``ServiceError`` `.unauthorized` when the backend no longer accepts the
    ///   session's refresh token; the caller then logs in again.
    func refresh(_ session: Session) async throws -> Session
}
