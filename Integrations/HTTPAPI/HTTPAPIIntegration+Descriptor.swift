import Core
import IntegrationKit

extension HTTPAPIIntegration {
    /// The custom HTTP API as the registry lists it (API.md): a login, then pages of changes.
    public static let descriptor = IntegrationDescriptor(
        name: "httpapi", summary: "the custom HTTP API of API.md",
        example: #"{"integration": "httpapi", "baseURL": "https://feed.example.com", "username": "me", "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": 200}"#,
        keys: [
            ConfigKey("baseURL", .url, .oneOf("source"), "the server, http(s)://host[:port]"),
            ConfigKey("fixture", .path, .oneOf("source"), "a folder of recorded responses (server.py --dump) to replay offline"),
            ConfigKey("username", .string, .required, "the login name"),
        ] + ConfigKey.secret("password", "the password") + [
            ConfigKey("pageSize", .int(1...1000), default: "100", "changes per page"),
            ConfigKey("allowInsecureHTTP", .bool, default: "false", "allow plain http:// to a host that is not loopback"),
        ] + HTTPLimits.keys,
        posts: PostsCapability(makeBackend: makeBackend, mediaSession: mediaSession))

    /// The login's access token, for the media archive: the session the feed's sync keeps for
    /// its account, sent only to `baseURL`'s origin (avatars the API serves itself), never to a
    /// media host elsewhere. A `fixture` feed has none.
    static func mediaSession(_ config: ConfigSection) throws -> MediaSessionCredential? {
        guard let baseURL = try config.serverURL("baseURL", allowInsecureHTTP: config.bool("allowInsecureHTTP") ?? false,
                                                 insecureHint: insecureHint),
              let username = try config.nonEmptyString("username") else { return nil }
        return MediaSessionCredential(server: baseURL, account: account(server: baseURL.absoluteString, username: username))
    }

    /// The account a feed's session is kept under: one per server and username.
    static func account(server: String, username: String) -> AccountKey {
        AccountKey(integration: "httpapi", server: server, account: username)
    }

    /// What a plain `http://` `baseURL` to another host is told.
    static let insecureHint = "use https, or set \"allowInsecureHTTP\": true if you accept sending credentials unencrypted"
}
