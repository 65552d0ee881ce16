import Core
import Foundation
import IntegrationKit

/// The credentials of a private web feed, from its `"auth"` object:
///
///     "auth": {"basic": {"user": "reader", "passwordEnv": "INTRANET_PASSWORD"}}
///     "auth": {"basic": {"user": "reader", "passwordFile": "secrets/intranet"}}
///     "auth": {"bearerFile": "secrets/newsletter-token"}      // or "bearerEnv"
///
/// The secret is read from the environment or a file, never from the config itself, and held
/// as a ``Core/Secret``, so no log line, error or stored state repeats it. It is sent only to
/// the configured URL's origin, and only over https or to this machine.
struct WebFeedAuth: Sendable {
    /// The `Authorization` field's value: `Basic <base64>` or `Bearer <token>`.
    let authorization: Secret

    /// Reads `auth` of a web feed at `url`; `nil` when there is none.
    ///
    /// - Throws: ``Core/ConfigError`` naming the key path: neither or both of `basic` and
    ///   `bearer…`, a user name with a colon or a control character, a missing secret, a token
    ///   that cannot go into a header, or a plain-http URL to a host that is not loopback.
    static func read(_ config: ConfigSection, url: URL) throws -> WebFeedAuth? {
        guard let auth = try config.section("auth") else { return nil }
        let basic = try auth.section("basic")
        let bearer = auth.has("bearerEnv") || auth.has("bearerFile") || auth.has("bearer")
        let made: WebFeedAuth
        switch (basic, bearer) {
        case (let basic?, false):
            let user = try basic.require(basic.string("user"), "user")
            guard !user.contains(":"), !user.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw basic.error("user", "must hold no colon and no control character (RFC 7617)")
            }
            let password = try basic.secret("password")
            try basic.finish()
            guard !password.revealed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw basic.error(nil, "the password holds a control character, which Basic credentials cannot carry")
            }
            let encoded = Data("\(user):\(password.revealed)".utf8).base64EncodedString()
            made = WebFeedAuth(authorization: Secret(scheme: "Basic", credentials: Secret(encoded)))
        case (nil, true):
            let token = try auth.secret("bearer")
            guard token.revealed.isEmpty || HeaderValue.isValid(token.revealed) else {
                throw auth.error(auth.has("bearerEnv") ? "bearerEnv" : "bearerFile",
                                 "the token holds a space or a character that a request header cannot carry")
            }
            made = WebFeedAuth(authorization: Secret(scheme: "Bearer", credentials: token))
        case (nil, false):
            throw auth.error(nil, "needs \"basic\" ({\"user\", \"passwordEnv\" or \"passwordFile\"}) or \"bearerEnv\" or \"bearerFile\"")
        case (.some, true):
            throw auth.error(nil, "give either \"basic\" or a bearer token, not both")
        }
        try auth.finish()
        if url.scheme?.lowercased() == "http", !ConfigSection.isLoopback(url.host ?? "") {
            throw config.error("auth", "\"\(Terminal.safe(url.absoluteString, limit: 200))\" is plain http to a host that is not loopback; "
                               + "credentials are sent only over https")
        }
        return made
    }
}
