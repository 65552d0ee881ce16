import Core
import Foundation
import IntegrationKit

/// The body of `POST /v1/auth/login` and `/v1/auth/refresh`.
struct APITokenResponse {
    var access_token: String
    var refresh_token: String?
    var token_type: String?
    var expires_in: Double?
}

extension APITokenResponse {
    private enum Field: String, CaseIterable { case access_token, refresh_token, token_type, expires_in }
    private static let fields = JSONKeys<Field>()

    /// Reads a token response: `access_token` a string; the others a string (a number for
    /// `expires_in`), `null` or missing.
    ///
    /// - Throws: `JSONReader.FieldError` for a missing or mistyped field, `SyntaxError` for bad JSON.
    init(body: Data) throws {
        self = try body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            guard try reader.peek() == UInt8(ascii: "{") else { throw JSONReader.FieldError(reason: "the body is not an object") }
            var access: String?, refresh: String?, type: String?, expires: Double?
            try reader.readObject(Self.fields) { reader, field in
                switch field {
                case .access_token?: access = try reader.string("access_token")
                case .refresh_token?: refresh = try reader.optionalString("refresh_token")
                case .token_type?: type = try reader.optionalString("token_type")
                case .expires_in?: expires = try reader.optionalDouble("expires_in")
                case nil: try reader.skipValue()
                }
            }
            guard reader.isAtEnd else { throw JSONReader.SyntaxError(offset: reader.offset, reason: "data follows the object") }
            guard let access else { throw JSONReader.FieldError(reason: "access_token is missing") }
            return APITokenResponse(access_token: access, refresh_token: refresh, token_type: type, expires_in: expires)
        }
    }
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
