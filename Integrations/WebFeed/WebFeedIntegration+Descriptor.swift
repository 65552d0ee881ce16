import Core
import Foundation
import IntegrationKit

extension WebFeedIntegration {
    /// The name a config's `"integration"` gives it.
    static let name = "webfeed"

    /// Web feeds as the registry lists them: an RSS, Atom or JSON Feed document, added by its
    /// address or a site's, or by the hundred from an OPML file (also the config's `"opml"` entries).
    public static let descriptor = IntegrationDescriptor(
        name: name, summary: "an RSS, Atom or JSON Feed document on the web",
        example: #"{"integration": "webfeed", "url": "https://daringfireball.net/feeds/main"}"#,
        keys: [
            ConfigKey("url", .url, .required, "the feed's address, or a page that names its feed (discovered at the first pull)"),
        ] + WebFeedHeaders.keys + HTTPLimits.keys,
        posts: PostsCapability(makeBackend: makeBackend, locationKey: "url", mediaCredential: mediaCredential),
        addForms: [WebFeedAddressForm(), WebFeedOPMLForm()],
        subscriptions: SubscriptionListCapability(
            kind: "an OPML file",
            read: { data in
                do {
                    return try OPML.subscriptions(in: data).map { Subscription(title: $0.title, url: $0.url, isSite: $0.isSite) }
                } catch let error as OPML.ReadError {
                    throw SubscriptionListError(error.description)
                }
            },
            fields: { ["url": .string($0.url.absoluteString)] }))

    /// A private feed's `auth`, for the media archive: sent only to the feed URL's origin, so an
    /// enclosure behind the same login is archived and one elsewhere never sees it.
    static func mediaCredential(_ config: ConfigSection) throws -> MediaCredential? {
        guard let url = try config.httpURL("url"), let auth = try WebFeedAuth.read(config, url: url) else { return nil }
        return MediaCredential(server: url, authorization: auth.authorization)
    }

    /// The `posts` section of a web feed at `url`, as `feedsync add` writes it.
    static func posts(_ url: URL) -> [(key: String, value: ConfigValue)] {
        [("integration", .string(name)), ("url", .string(url.absoluteString))]
    }
}
