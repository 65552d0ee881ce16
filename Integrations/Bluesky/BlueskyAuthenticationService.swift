import Core
import Foundation
import IntegrationKit

/// Logs in with `com.atproto.server.createSession` (identifier and app password) and renews
/// the session with `refreshSession` (the refresh token as bearer), so the password is sent
/// only when there is no session to refresh: a PDS allows about 30 logins in 5 minutes and
/// 300 a day.
///
/// A session lapses when its access token's `exp` says; the sync engine refreshes it before.
struct BlueskyAuthenticationService: AuthenticationService {
    let client: BlueskyClient
    let identifier: String
    let password: Secret

    func logIn() async throws -> Session {
        let body = try JSONSerialization.data(withJSONObject: ["identifier": identifier, "password": password.revealed])
        do {
            return try session(from: try await client.procedure("com.atproto.server.createSession", body: body, token: nil,
                                                                "logging in as \(identifier) to"))
        } catch let error as ServiceError where error.code == .unauthorized || error.code == .invalidRequest {
            // A 400 here is also a refused login (AccountTakedown, AuthFactorTokenRequired…).
            throw ServiceError(.unauthorized, error.operation, "\(error.reason); check the identifier and the app password "
                               + "(Settings → Privacy and security → App passwords)")
        }
    }

    /// - Throws: ``ServiceError`` `.unauthorized` when the refresh token is expired, revoked or
    ///   missing: the engine then logs in again.
    func refresh(_ session: Session) async throws -> Session {
        guard let refreshToken = session.refreshToken else {
            throw ServiceError(.unauthorized, "refreshing the session", "the stored session has no refresh token")
        }
        do {
            return try self.session(from: try await client.procedure("com.atproto.server.refreshSession", body: nil, token: refreshToken,
                                                                     "refreshing the session of \(identifier) on"))
        } catch let error as ServiceError where error.code == .invalidRequest {
            throw ServiceError(.unauthorized, error.operation, error.reason)
        }
    }

    /// The session an answer holds. Its tokens go into `Authorization` headers, so each passes
    /// ``HeaderValue`` here, before the engine stores the session.
    private func session(from response: HTTPResponse) throws -> Session {
        let operation = "logging in to \(client.origin.host)"
        let dto: BlueskySessionResponse
        do {
            dto = try BlueskySessionResponse(body: response.body)
        } catch let error as JSONReader.TooDeepError {
            throw ServiceError(.contractViolation, operation, error.reason)
        } catch {
            throw ServiceError(.invalidResponse, operation, "the answer holds no accessJwt and refreshJwt")
        }
        for (name, token) in [("accessJwt", dto.accessJwt), ("refreshJwt", dto.refreshJwt)] {
            guard token.utf8.count <= 16_384 else {
                throw ServiceError(.invalidResponse, operation, "the \(name) is \(token.utf8.count) bytes long, more than 16384")
            }
            try HeaderValue.check(token, name, operation)
        }
        return Session(accessToken: Secret(dto.accessJwt), refreshToken: Secret(dto.refreshJwt),
                       expiresAt: BlueskyJWT.expiry(of: dto.accessJwt))
    }
}

extension BlueskySessionResponse {
    /// Reads `createSession`'s or `refreshSession`'s answer with the one JSON reader.
    ///
    /// - Throws: `JSONReader.SyntaxError` or `TooDeepError` when the body is not JSON feedsync
    ///   reads, `JSONReader.FieldError` when it lacks a token or mistypes one.
    init(body: Data) throws {
        (accessJwt, refreshJwt, did) = try body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            var access: String?, refresh: String?, did: String?
            guard try reader.peek() == UInt8(ascii: "{") else { throw JSONReader.FieldError(reason: "the answer is not an object") }
            try reader.readObject { reader, key in
                switch key {
                case "accessJwt": access = try reader.string("accessJwt")
                case "refreshJwt": refresh = try reader.string("refreshJwt")
                case "did":
                    // Kept only when it is a string; the tokens are what a session needs.
                    do { did = try reader.optionalString("did") } catch is JSONReader.FieldError { did = nil }
                default: try reader.skipValue()
                }
            }
            guard reader.isAtEnd else { throw JSONReader.SyntaxError(offset: reader.offset, reason: "data follows the answer") }
            guard let access, let refresh else { throw JSONReader.FieldError(reason: "accessJwt or refreshJwt is missing") }
            return (access, refresh, did)
        }
    }
}

/// What feedsync reads of a JWT's payload, without verifying it: it only decides when to
/// refresh, and the server judges the token.
enum BlueskyJWT {
    /// The longest an access token is taken to last, whatever its `exp` says.
    static let maxLifetime: TimeInterval = 86_400

    /// When the token lapses: its `exp`, at most ``maxLifetime`` from now; `nil` when it has
    /// no readable `exp` (the server's `ExpiredToken` then says when).
    static func expiry(of token: String, now: Date = Date()) -> Date? {
        guard let seconds = claims(of: token)?.exp else { return nil }
        guard seconds.isFinite, seconds > 0, seconds < 100_000_000_000 else { return nil }
        return min(Date(timeIntervalSince1970: seconds), now.addingTimeInterval(maxLifetime))
    }

    /// The account's DID, from the token's `sub`.
    static func subject(of token: String) -> String? {
        guard let sub = claims(of: token)?.sub, BlueskyIdentifier.isDID(sub) else { return nil }
        return sub
    }

    /// The payload's `exp` and `sub`, each `nil` when missing or of another type; `nil` when the
    /// token has no payload that is a JSON object.
    private static func claims(of token: String) -> (exp: Double?, sub: String?)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].utf8.count <= 8_192 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? data.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self))
            var claims: (exp: Double?, sub: String?) = (nil, nil)
            guard try reader.peek() == UInt8(ascii: "{") else { return nil }
            try reader.readObject { reader, key in
                switch key {
                case "exp": claims.exp = try? reader.optionalDouble("exp")
                case "sub": claims.sub = try? reader.optionalString("sub")
                default: try reader.skipValue()
                }
            }
            return reader.isAtEnd ? claims : nil
        }
    }
}
