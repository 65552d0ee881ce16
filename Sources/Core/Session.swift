import Foundation

/// What a backend handed out at login: the tokens that authorise requests, and when they lapse.
public struct Session: Hashable, Sendable, CustomStringConvertible {
    public var accessToken: Secret
    /// The token that buys a new access token without the password; `nil` when the backend
    /// gives none.
    public var refreshToken: Secret?
    /// When the access token stops working; `nil` for tokens that do not expire.
    public var expiresAt: Date?

    public init(accessToken: Secret, refreshToken: Secret? = nil, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
    }

    /// Whether the access token is still good for at least `margin` seconds after `now`.
    public func isUsable(at now: Date, margin: TimeInterval) -> Bool {
        guard let expiresAt else { return true }
        return expiresAt.timeIntervalSince(now) > margin
    }

    public var description: String {
        let expiry = expiresAt.map { "expires \($0)" } ?? "no expiry"
        return "Session(tokens redacted, \(expiry))"
    }
}

/// How to log in to a backend.
public enum Credentials: Hashable, Sendable {
    /// A username and password exchanged for tokens at login.
    case password(username: String, password: Secret)
    /// A long-lived access token used as it is.
    case accessToken(Secret)
}
