import Core
import Foundation
import Sync

/// Builds the store and the services of the feeds a command uses, from config, through the
/// integrations the ``IntegrationRegistry`` finds by the names the config gives.
///
/// Building touches nothing: no file is opened and no request sent until the
/// ``IntegrationsManager`` sets the integrations up. A bad config therefore changes nothing.
/// Only the feeds asked for are built, so a command that reads the local store needs no
/// backend's secret.
public struct ServiceProvider: Sendable {
    /// One configured feed: its settings, and either its services, built once and kept, or the
    /// recipe a sync builds them from (``backendsPerSync``).
    public struct FeedServices: Sendable {
        public var name: String
        public var interval: TimeInterval
        public var maxDeletionRatio: Double
        public var maxAttempts: Int
        /// The feed's rules then the config's, compiled.
        public var rules: PostRules
        /// The feed's `"keep"`, or the config's.
        public var retention: Retention?
        var backend: Backend
        /// Where the backend pushes the feed's changes, when the feed streams (`"stream": true`).
        public var live: (any LiveSource)? {
            guard case .kept(let kept) = backend else { return nil }
            return kept.live
        }
    }

    /// How a feed's services are had: a box keeps a feed's entry small when they are not kept.
    enum Backend: Sendable {
        case kept(KeptServices)
        /// Built for each sync and dropped after it (``FeedRebuild``).
        case perSync(@Sendable (IntegrationContext) -> FeedBackend)
    }

    final class KeptServices: Sendable {
        let services: SyncEngine.Services
        /// How the feed waits: its slot of ``ServiceProvider/slots`` and its host permits handed back.
        let waiter: Waiter
        let live: (any LiveSource)?

        init(services: SyncEngine.Services, waiter: Waiter, live: (any LiveSource)?) {
            self.services = services
            self.waiter = waiter
            self.live = live
        }
    }

    /// Which feeds to build.
    public enum Selection: Sendable, Equatable {
        /// None: the command reads only the store.
        case none
        case all
        case named([String])
    }

    public let store: Managed<any FeedStore>
    /// The sync slots of these feeds (`daemon.concurrency`): a sync holds one while it works,
    /// and each feed's ``FeedServices/waiter`` hands it back while the sync waits.
    public let slots: SyncSlots
    /// The feeds built, in config order.
    public let feeds: [FeedServices]
    /// Each built feed's position in ``feeds``, by name: a daemon with 10,000 feeds looks each
    /// one up once, and a scan per lookup would cost 10^8 steps.
    let feedIndex: [String: Int]
    /// Every integration's lifecycle in setup order: the store first, then each feed's.
    public let lifecycles: [any IntegrationLifecycle]
    /// What the store's integration says of it (how daemons share it, whether it is local files).
    public let storeTraits: StoreTraits
    /// Whether a feed whose backend keeps nothing between syncs (``FeedBackend/rebuild``) keeps
    /// only its recipe, its backend built for each sync: what a daemon with many feeds does.
    /// Its ``lifecycles`` then list, for such feeds, one shared lifecycle per kind.
    public let backendsPerSync: Bool
    /// What every feed's integrations share, kept to build a feed's backend for a sync.
    private let hosts: HostGate
    private let resources: SharedResources
    private let log: Logger

    /// - Parameters:
    ///   - sharing: a store already built (and maybe open) to use instead of building one: a
    ///     reloading daemon keeps its store.
    ///   - createStore: whether setting the store up may create its file.
    ///   - log: where integrations log; waits an operator should see are its notices.
    ///   - registry: the integrations the config's names choose from.
    ///   - backendsPerSync: keep the recipe of a backend that keeps nothing between syncs, not
    ///     the backend (``backendsPerSync``).
    /// - Throws: ``ConfigError`` naming the section that names an unknown integration, or a
    ///   key its integration's table does not list, or that its integration refuses.
    public init(config: Config, feeds selection: Selection, sharing shared: Managed<any FeedStore>? = nil, createStore: Bool = true,
                log: Logger = .disabled, traffic: any TrafficObserver = NoTrafficObserver(), registry: IntegrationRegistry = .standard,
                backendsPerSync: Bool = false) throws {
        let hosts = HostGate(maxInFlightPerHost: config.daemon.maxRequestsPerHost)
        let resources = SharedResources(traffic: traffic)
        let slots = SyncSlots(limit: config.daemon.concurrency)
        let storeSection = config.store
        let (storeIntegration, storeCapability) = try registry.integration(for: storeSection, offering: \.store, default: registry.defaultStore)
        let store = try shared ?? Self.build(storeSection, storeIntegration) { try storeCapability.makeStore($0, createStore, log) }
        var lifecycles: [any IntegrationLifecycle] = [store.lifecycle]
        let chosen: [Config.Feed]
        switch selection {
        case .none: chosen = []
        case .all: chosen = config.feeds
        case .named(let names):
            let wanted = Set(names)
            chosen = config.feeds.filter { wanted.contains($0.name) }
        }
        var sharedKeys: Set<String> = []
        feeds = try chosen.map { feed in
            let waiter = Waiter(slots: slots, feed: feed.name)
            let context = Self.context(hosts: hosts, log: log, shared: resources, waiter: waiter, interval: feed.interval)
            let (postsIntegration, posts) = try registry.integration(for: feed.posts, offering: \.posts)
            let backend = try Self.build(feed.posts, postsIntegration) { try posts.makeBackend($0, context) }
            let settings = { (backend: Backend) in
                FeedServices(name: feed.name, interval: feed.interval, maxDeletionRatio: feed.maxDeletionRatio,
                             maxAttempts: feed.maxAttempts, rules: feed.filter, retention: feed.retention, backend: backend)
            }
            // Built once above, so a bad section is a config error now; then only its recipe is kept.
            if backendsPerSync, feed.videos == nil, let rebuild = backend.rebuild, backend.videos == nil, backend.live == nil,
               backend.authentication == nil {
                if sharedKeys.insert(rebuild.sharedKey).inserted { lifecycles.append(rebuild.shared) }
                return settings(.perSync(rebuild.make))
            }
            lifecycles.append(backend.lifecycle)
            var videos: any VideoService = backend.videos ?? NoVideoHost()
            if let section = feed.videos {
                let (videosIntegration, host) = try registry.integration(for: section, offering: \.videos)
                let managed = try Self.build(section, videosIntegration) { try host.makeService($0, context) }
                videos = managed.service
                lifecycles.append(managed.lifecycle)
            }
            return settings(.kept(KeptServices(services: Self.services(backend, videos: videos, store: store.service, requests: context.requests),
                                               waiter: waiter, live: backend.live)))
        }
        self.store = store
        storeTraits = storeCapability.traits
        self.slots = slots
        self.lifecycles = lifecycles
        self.backendsPerSync = backendsPerSync
        self.hosts = hosts
        self.resources = resources
        self.log = log
        feedIndex = Dictionary(feeds.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The services a sync of `feed` uses and how it waits: those kept, or for a feed built per
    /// sync (``backendsPerSync``), its backend built now, which lives as long as the sync does.
    func services(of feed: FeedServices) -> (services: SyncEngine.Services, waiter: Waiter) {
        switch feed.backend {
        case .kept(let kept):
            return (kept.services, kept.waiter)
        case .perSync(let make):
            let waiter = Waiter(slots: slots, feed: feed.name)
            let context = Self.context(hosts: hosts, log: log, shared: resources, waiter: waiter, interval: feed.interval)
            let backend = make(context)
            return (Self.services(backend, videos: backend.videos ?? NoVideoHost(), store: store.service, requests: context.requests), waiter)
        }
    }

    /// What every integration built for a feed is handed; a new request counter each time.
    private static func context(hosts: HostGate, log: Logger, shared: SharedResources, waiter: Waiter, interval: TimeInterval) -> IntegrationContext {
        var context = IntegrationContext(requests: RequestCounter(), hosts: hosts, log: log, shared: shared,
                                         userAgent: "feedsync/\(feedsyncVersion)", waiter: waiter)
        context.interval = interval
        return context
    }

    private static func services(_ backend: FeedBackend, videos: any VideoService, store: any FeedStore, requests: RequestCounter) -> SyncEngine.Services {
        SyncEngine.Services(authentication: backend.authentication, posts: backend.posts, videos: videos, store: store, requests: requests,
                            backend: backend.identity, account: backend.account, pruner: store)
    }

    /// What `integration` builds of `section`, once every key the section holds is one its
    /// descriptor lists: the integration reads the keys it needs, and the table refuses the rest.
    private static func build<Built>(_ section: ConfigSection, _ integration: IntegrationDescriptor,
                                     _ make: (ConfigSection) throws -> Built) throws -> Built {
        let built = try make(section)
        try section.finish(alsoKnown: ["integration"] + integration.keys.map(\.name))
        return built
    }
}
