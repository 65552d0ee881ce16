import Bluesky
import Core
import HTTPAPI
import Mastodon
import MediaArchive
import PeerTube
import MockVideoHost
import PostgresStore
import ReaderAPI
import SQLiteCache
import WebFeed
import YouTube
import Webhooks

extension IntegrationRegistry {
    /// Every integration feedsync ships, one line each: the one place in `Sources/` that names
    /// them. Adding one is a folder under `Integrations/`, its target in `Package.swift` (and in
    /// App's dependencies), and a line here with its `import`.
    ///
    /// The order is the order of help and the manual; the first store is the default store.
    public static let standard = IntegrationRegistry([
        WebFeedIntegration.descriptor,
        MastodonIntegration.descriptor,
        BlueskyIntegration.descriptor,
        HTTPAPIIntegration.descriptor,
        MockVideoHostIntegration.descriptor,
        SQLiteCacheIntegration.descriptor,
        PostgresStoreIntegration.descriptor,
        ReaderAPIIntegration.descriptor,
        WebhooksIntegration.descriptor,
        MediaArchiveIntegration.descriptor,
        PeerTubeIntegration.descriptor,
        YouTubeIntegration.descriptor,
    ])
}
