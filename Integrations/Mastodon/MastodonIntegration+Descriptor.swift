import Core
import IntegrationKit

extension MastodonIntegration {
    /// The name a config's `"integration"` gives it.
    static let name = "mastodon"

    /// Mastodon as the registry lists it: a timeline of a Mastodon-compatible server, a sign-in
    /// in the browser, and `feedsync add @user@server`.
    public static let descriptor = IntegrationDescriptor(
        name: name, summary: "a timeline of a Mastodon-compatible server",
        example: #"{"integration": "mastodon", "server": "https://example.social", "accessTokenEnv": "MASTODON_TOKEN", "timeline": "home", "maxPosts": 2000, "since": "2026-01-01"}"#,
        keys: [
            ConfigKey("server", .url, .required, "the server, https://… (plain http:// for loopback test servers only)"),
        ] + ConfigKey.secret("accessToken", "the access token") + [
            ConfigKey("timeline", .string, .required,
                      "home, list:<id>, account:<id>, account:@user@server, bookmarks, favourites, hashtag:<tag>, public or public:local"),
            ConfigKey("pageSize", .int(1...40), default: "40", "statuses per request"),
            ConfigKey("maxPosts", .int(1...10_000_000), "how far back the first sync goes, in statuses (default: no bound)"),
            ConfigKey("since", .date, "how far back the first sync goes, as a date (default: no bound)"),
        ] + HTTPLimits.keys + [
            ConfigKey("stream", .bool, default: "false", "follow the timeline live through the streaming API, in feedsyncd"),
            ConfigKey("streamingURL", .uri, "where the streaming API is, when the server announces another host (default: what it announces)"),
        ] + EventStreamLimits.keys,
        posts: PostsCapability(makeBackend: makeBackend, mediaCredential: mediaCredential),
        signIn: MastodonSignIn(),
        addForms: [MastodonAccountForm()])

    /// The access token, for the media archive: sent only to the server's own origin (a private
    /// instance serving its media itself), never to a media host or CDN elsewhere.
    static func mediaCredential(_ config: ConfigSection) throws -> MediaCredential? {
        guard let server = try config.serverURL(
            "server", insecureHint: "Mastodon servers are reached over https (http is for loopback test servers only)") else { return nil }
        let token = try config.secret("accessToken")
        guard !token.revealed.isEmpty, HeaderValue.isValid(token.revealed) else { return nil }
        return MediaCredential(server: server, token: token)
    }
}
