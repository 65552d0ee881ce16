import Core
import Foundation
import IntegrationKit

/// The body of `POST /v1/auth/login` and `/v1/auth/refresh`.
struct APITokenResponse: Decodable {
    var access_token: String
    var refresh_token: String?
    var token_type: String?
    var expires_in: Double?
}

/// The body every error response may carry: `{"error": {"code": …, "message": …}}`.
struct APIErrorResponse: Decodable {
    struct Detail: Decodable {
        var code: String?
        var message: String?
    }

    var error: Detail
}

struct APILoginRequest: Encodable {
    var username: String
    var password: String
}

struct APIRefreshRequest: Encodable {
    var refresh_token: String
}

extension Session {
    /// Maps a token response received at `now`.
    init(_ dto: APITokenResponse, receivedAt now: Date) throws {
        guard !dto.access_token.isEmpty else {
            throw ServiceError(.invalidResponse, "reading the login response", "access_token is empty")
        }
        if let type = dto.token_type, type.lowercased() != "bearer" {
            throw ServiceError(.invalidResponse, "reading the login response", "token_type \"\(type)\" is not Bearer")
        }
        // Each token goes into an Authorization header: one that could split it is never stored.
        try HeaderValue.check(dto.access_token, "access_token", "reading the login response")
        if let refresh = dto.refresh_token, !refresh.isEmpty { try HeaderValue.check(refresh, "refresh_token", "reading the login response") }
        // A lifetime beyond ten years (or not a finite number) is no lifetime a server means.
        if let seconds = dto.expires_in, !(seconds.isFinite && (0...315_360_000).contains(seconds)) {
            throw ServiceError(.contractViolation, "reading the login response", "expires_in \(seconds) is not a number of seconds up to ten years")
        }
        self.init(accessToken: Secret(dto.access_token),
                  refreshToken: dto.refresh_token.flatMap { $0.isEmpty ? nil : Secret($0) },
                  expiresAt: dto.expires_in.map { now.addingTimeInterval($0) })
    }
}
