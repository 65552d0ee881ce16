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
        posts: PostsCapability(makeBackend: makeBackend))
}
