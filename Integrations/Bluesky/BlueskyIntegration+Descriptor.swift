import Core
import IntegrationKit

extension BlueskyIntegration {
    /// The name a config's `"integration"` gives it.
    static let name = "bluesky"

    /// Bluesky as the registry lists it: a timeline read through a PDS with an app password, a
    /// sign-in that asks for one, and `feedsync add` of a handle or DID.
    public static let descriptor = IntegrationDescriptor(
        name: name, summary: "a Bluesky (AT Protocol) timeline",
        example: #"{"integration": "bluesky", "service": "https://bsky.social", "identifier": "me.bsky.social", "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home"}"#,
        keys: [
            ConfigKey("service", .url, .required, "the PDS, https://… (plain http:// for loopback test servers only)"),
            ConfigKey("identifier", .string, .required, "the account's handle, DID or email address"),
        ] + ConfigKey.secret("appPassword", "an app password") + [
            ConfigKey("timeline", .string, .required,
                      "home, author:@handle, author:did:…, feed:at://…, list:at://…, likes or search:QUERY"),
            ConfigKey("filter", .string, "for author: timelines, which of the author's posts: \(BlueskyTimeline.authorFilters.joined(separator: ", "))"),
            ConfigKey("pageSize", .int(1...100), default: "100", "posts per request"),
            ConfigKey("maxPosts", .int(1...10_000_000), "how far back the first sync goes, in posts (default: no bound)"),
            ConfigKey("since", .date, "how far back the first sync goes, as a date (default: no bound)"),
        ] + HTTPLimits.keys + [
            ConfigKey("stream", .bool, default: "false", "follow the timeline live through Jetstream, in feedsyncd"),
            ConfigKey("jetstreamURL", .uri, default: BlueskyLiveConfig.defaultURL.absoluteString, "the Jetstream server"),
            ConfigKey("jetstreamPlaintext", .bool, default: "false", "accept a plain ws:// Jetstream URL to a host that is not loopback"),
            ConfigKey("subscriptionRefreshSeconds", .int(BlueskyLiveConfig.refreshRange), default: "the feed's interval",
                      "how often the follow set is read again, in seconds"),
            ConfigKey("streamIdleSeconds", .int(5...3600), default: "60", "how long the stream may stay silent before it is reconnected, in seconds"),
        ],
        posts: PostsCapability(makeBackend: makeBackend),
        signIn: BlueskySignIn(),
        addForms: [BlueskyActorForm()])
}
