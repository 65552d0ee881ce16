import Core
import Foundation
import IntegrationKit

/// Logs in to the HTTP API with a username and password, and refreshes its tokens.
struct HTTPAPIAuthenticationService: AuthenticationService {
    let client: HTTPAPIClient
    let username: String
    let password: Secret
    let now: @Sendable () -> Date

    func logIn() async throws -> Session {
        let body = client.encode(APILoginRequest(username: username, password: password.revealed))
        return try await tokens(client.request("POST", "/v1/auth/login", headers: Self.json, body: body),
                                "logging in as \(username) to")
    }

    func refresh(_ session: Session) async throws -> Session {
        guard let refreshToken = session.refreshToken else {
            throw ServiceError(.unauthorized, "refreshing the session with \(client.server)", "the session has no refresh token")
        }
        let body = client.encode(APIRefreshRequest(refreshToken: refreshToken.revealed))
        return try await tokens(client.request("POST", "/v1/auth/refresh", headers: Self.json, body: body),
                                "refreshing the session with")
    }

    private static let json = ["Content-Type": "application/json", "Accept": "application/json"]

    private func tokens(_ request: HTTPRequest, _ operation: String) async throws -> Session {
        let received = now()
        let response = try await client.send(request, operation)
        return try Session(client.decode(APITokenResponse.init(body:), from: response, operation), receivedAt: received)
    }
}
