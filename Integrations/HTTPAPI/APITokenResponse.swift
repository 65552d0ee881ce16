import Core
import Foundation
import IntegrationKit

/// The body of `POST /v1/auth/login` and `/v1/auth/refresh`.
struct APITokenResponse {
    var accessToken: String
    var refreshToken: String?
    var tokenType: String?
    var expiresIn: Double?
}

extension APITokenResponse {
    private enum Field: String, CaseIterable {
        case accessToken = "access_token", refreshToken = "refresh_token", tokenType = "token_type", expiresIn = "expires_in"
    }
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
                case .accessToken?: access = try reader.string("access_token")
                case .refreshToken?: refresh = try reader.optionalString("refresh_token")
                case .tokenType?: type = try reader.optionalString("token_type")
                case .expiresIn?: expires = try reader.optionalDouble("expires_in")
                case nil: try reader.skipValue()
                }
            }
            guard reader.isAtEnd else { throw JSONReader.SyntaxError(offset: reader.offset, reason: "data follows the object") }
            guard let access else { throw JSONReader.FieldError(reason: "access_token is missing") }
            return APITokenResponse(accessToken: access, refreshToken: refresh, tokenType: type, expiresIn: expires)
        }
    }
}

struct APILoginRequest: Encodable {
    var username: String
    var password: String
}

struct APIRefreshRequest: Encodable {
    var refreshToken: String

    private enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
}

extension Session {
    /// Maps a token response received at `now`.
    init(_ dto: APITokenResponse, receivedAt now: Date) throws {
        guard !dto.accessToken.isEmpty else {
            throw ServiceError(.invalidResponse, "reading the login response", "access_token is empty")
        }
        if let type = dto.tokenType, type.lowercased() != "bearer" {
            throw ServiceError(.invalidResponse, "reading the login response", "token_type \"\(type)\" is not Bearer")
        }
        // Each token goes into an Authorization header: one that could split it is never stored.
        try HeaderValue.check(dto.accessToken, "access_token", "reading the login response")
        if let refresh = dto.refreshToken, !refresh.isEmpty { try HeaderValue.check(refresh, "refresh_token", "reading the login response") }
        // A lifetime beyond ten years (or not a finite number) is no lifetime a server means.
        if let seconds = dto.expiresIn, !(seconds.isFinite && (0...315_360_000).contains(seconds)) {
            throw ServiceError(.contractViolation, "reading the login response", "expires_in \(seconds) is not a number of seconds up to ten years")
        }
        self.init(accessToken: Secret(dto.accessToken),
                  refreshToken: dto.refreshToken.flatMap { $0.isEmpty ? nil : Secret($0) },
                  expiresAt: dto.expiresIn.map { now.addingTimeInterval($0) })
    }
}
