import Core
import Foundation
import Sync

/// Builds the store and every feed's services from config, by integration name.
///
/// Building touches nothing: no file is opened and no request sent until the
/// ``IntegrationsManager`` sets the integrations up. A bad config therefore changes nothing.
public struct ServiceProvider: Sendable {
    /// The services of one configured feed.
    public struct FeedServices: Sendable {
        public var name: String
        public var interval: TimeInterval
        public var maxDeletionRatio: Double
        public var maxAttempts: Int
        public var services: SyncEngine.Services
    }

    public let store: any FeedStore
    public let feeds: [FeedServices]
    /// Every integration's lifecycle in setup order: the store first, then each feed's.
    public let lifecycles: [any IntegrationLifecycle]

    /// - Throws: ``ConfigError`` naming the section that names an unknown integration or
    ///   that its integration refuses.
    public init(config: Config) throws {
        let hosts = HostGate(maxInFlightPerHost: config.daemon.maxRequestsPerHost)
        let storeSection = config.store
        let store = try Self.integration(storeSection, IntegrationRegistry.stores, default: "sqlite").makeStore(storeSection)
        var lifecycles: [any IntegrationLifecycle] = [store.lifecycle]
        feeds = try config.feeds.map { feed in
            let context = IntegrationContext(requests: RequestCounter(), hosts: hosts)
            let backend = try Self.integration(feed.posts, IntegrationRegistry.posts).makeBackend(feed.posts, context: context)
            lifecycles.append(backend.lifecycle)
            var videos: any VideoService = backend.videos ?? NoVideoHost()
            if let section = feed.videos {
                let managed = try Self.integration(section, IntegrationRegistry.videos).makeVideoService(section, context: context)
                videos = managed.service
                lifecycles.append(managed.lifecycle)
            }
            return FeedServices(name: feed.name, interval: feed.interval, maxDeletionRatio: feed.maxDeletionRatio,
                                maxAttempts: feed.maxAttempts,
                                services: SyncEngine.Services(authentication: backend.authentication, posts: backend.posts,
                                                              videos: videos, store: store.service, requests: context.requests))
        }
        self.store = store.service
        self.lifecycles = lifecycles
    }

    /// The integration a section's `"integration"` key names.
    private static func integration<T>(_ section: ConfigSection, _ registry: [String: T], default fallback: String? = nil) throws -> T {
        let name = try section.require(section.nonEmptyString("integration") ?? fallback, "integration")
        guard let integration = registry[name.lowercased()] else {
            let known = registry.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            throw section.error("integration", "unknown integration \"\(name)\"; known here: \(known)")
        }
        return integration
    }
}
