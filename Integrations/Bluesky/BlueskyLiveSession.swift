import Core
import Foundation
import IntegrationKit

/// The session the live mirror's requests (hydration, follows) use, shared by every live feed
/// of one account in the process: one login per account, refreshed as its token lapses, so
/// fifty live feeds do not spend a PDS's login quota (about 30 in 5 minutes).
///
/// It is kept in memory only; the polled syncs keep their own session in the store.
actor BlueskyLiveSession {
    private let authentication: BlueskyAuthenticationService
    private var session: Session?

    init(_ authentication: BlueskyAuthenticationService) { self.authentication = authentication }

    /// A usable access token: the current one, a refreshed one when it has lapsed, or a new login.
    func token(renew: Bool = false) async throws -> Secret {
        if let session, !renew, session.expiresAt.map({ $0.timeIntervalSinceNow > 60 }) ?? true { return session.accessToken }
        if let session, let renewed = try? await authentication.refresh(session) {
            self.session = renewed
            return renewed.accessToken
        }
        let fresh = try await authentication.logIn()
        session = fresh
        return fresh.accessToken
    }

    /// Calls a query with the session's token; a refused token is renewed once.
    func query(_ client: BlueskyClient, _ method: String, _ parameters: [URLQueryItem], _ operation: String) async throws -> HTTPResponse {
        do {
            return try await client.query(method, parameters, token: try await token(), operation)
        } catch let error as ServiceError where error.code == .unauthorized {
            return try await client.query(method, parameters, token: try await token(renew: true), operation)
        }
    }

    /// The account's DID, from the access token.
    func did() async throws -> String? { BlueskyJWT.subject(of: try await token().revealed) }
}
