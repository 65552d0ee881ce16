import Core
import Foundation

/// Checks the configured access token with `verify_credentials`. Mastodon tokens do not
/// expire, so a refresh is the same check; a rejected token is `.unauthorized`.
struct MastodonAuthenticationService: AuthenticationService {
    let client: MastodonClient
    let token: Secret

    func logIn() async throws -> Session {
        _ = try await client.get(client.url("/api/v1/accounts/verify_credentials"), "checking the access token with")
        return Session(accessToken: token)
    }

    func refresh(_ session: Session) async throws -> Session { try await logIn() }
}
