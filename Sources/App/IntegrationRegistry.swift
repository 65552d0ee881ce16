import Bluesky
import Core
import HTTPAPI
import Mastodon
import MockVideoHost
import PostgresStore
import SQLiteCache
import WebFeed

/// The one place where an integration's name in config maps to its module.
///
/// Adding a backend: a folder under Integrations/, a target in Package.swift, and a line here.
enum IntegrationRegistry {
    static var posts: [String: any PostsIntegration.Type] { [
        "httpapi": HTTPAPIIntegration.self,
        "mastodon": MastodonIntegration.self,
        "webfeed": WebFeedIntegration.self,
        "bluesky": BlueskyIntegration.self,
    ] }

    static var videos: [String: any VideosIntegration.Type] { [
        "mockvideohost": MockVideoHostIntegration.self,
    ] }

    static var stores: [String: any StoreIntegration.Type] { [
        "sqlite": SQLiteCacheIntegration.self,
        "postgres": PostgresStoreIntegration.self,
    ] }
}
