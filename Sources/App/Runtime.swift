import Core
import Foundation
import Sync

/// A loaded config with the services a command uses built: what both executables run on.
///
///     let runtime = try Runtime.load(configPath: options["--config"], Runtime.Options(feeds: .named(["home"])))
///     try await runtime.start()
///     defer { await runtime.stop() }
///     let report = try await runtime.engine(forFeed: "home").run()
public struct Runtime: Sendable {
    /// What to build from the config.
    public struct Options: Sendable {
        /// The feeds whose backends are built; only these need their secrets.
        public var feeds: ServiceProvider.Selection = .all
        /// Whether starting may create the store's file; commands that only read it pass `false`.
        public var createStore = true
        /// Note a missing secret in ``Runtime/missingSecrets`` instead of failing (`config check`).
        public var deferMissingSecrets = false
        /// Read a feed name that begins with `-` instead of refusing it, so `remove` and `logout`
        /// can take such a feed out of a config written before the rule.
        public var optionLikeNames = false
        /// A store already in use to share rather than build (a reloading daemon keeps its own).
        public var sharing: Managed<any FeedStore>?
        /// Where integrations and syncs log: retries at `debug`, and waits and upgrades an
        /// operator should see as notices (``Core/Logger/notice(_:)``).
        public var log: Logger = .disabled {
            didSet { noticesToTerminal = false }
        }
        /// Told, in one sentence, about the waits and upgrades an operator should see: setting
        /// it sets ``log`` to one that hands it every event from `info` up as a sentence.
        public var notice: @Sendable (String) -> Void {
            get { { [log] in log.notice($0) } }
            set { log = Logger(sentences: newValue) }
        }
        /// Whether no one has said where notices go, so a command prints them on standard error.
        public private(set) var noticesToTerminal = true
        /// Told about every request the integrations send (the daemon's metrics).
        public var traffic: any TrafficObserver = NoTrafficObserver()
        /// The integrations the config's names choose from.
        public var registry: IntegrationRegistry = .standard
        /// Whether to keep ``Runtime/feedOrigins``, ``Runtime/feedURLs`` and
        /// ``Runtime/feedRules``, which only `config check`, the config editor and `rules apply`
        /// read; the daemon leaves them empty, a few hundred bytes a feed it never reads (issue 40).
        public var keepsFeedDetails = true
        /// Whether a feed whose backend keeps nothing between syncs keeps only the recipe its
        /// backend is built from for each sync (``ServiceProvider/backendsPerSync``): the daemon's
        /// choice, so 100,000 web feeds hold no 100,000 backends between their syncs (issue 40).
        public var backendsPerSync = false

        public init(feeds: ServiceProvider.Selection = .all, createStore: Bool = true) {
            self.feeds = feeds
            self.createStore = createStore
        }
    }

    /// The config file in use, as the operator named it.
    public let configName: String
    /// The daemon's settings from the config.
    public let daemon: Config.Daemon
    /// Where the daemon serves its metrics, if the config says.
    public let metricsListen: ListenAddress?
    /// The reader listener, if the config has a `"serve"` section.
    public let serve: Config.Serve?
    /// The feeds the reader listener serves: every feed of the config, with its group.
    public let servedFeeds: [ServedFeed]
    /// What answers the reader listener's requests: the registry's serving integration.
    public let serving: ServingCapability?
    /// The saved searches the reader listener serves as feeds, by name.
    public let searches: [String: String]
    /// What the store's integration says of it: how daemons share it, whether it is local files.
    public var storeTraits: StoreTraits { provider.storeTraits }
    /// Warnings from reading the config, each one sentence.
    public let warnings: [String]
    /// With ``Options/deferMissingSecrets``: each secret the environment lacks, one sentence each.
    public let missingSecrets: [String]
    /// Every feed the config names, built or not, in config order.
    public let feedNames: [String]
    /// For feeds expanded from an OPML file: where each came from, by feed name (empty
    /// unless ``Options/keepsFeedDetails``).
    public let feedOrigins: [String: String]
    /// Where each feed whose integration names one (``PostsCapability/locationKey``: a web
    /// feed's `url`) is polled, as the config says, by feed name (empty unless
    /// ``Options/keepsFeedDetails``).
    public let feedURLs: [String: String]
    /// Each feed's rules then the config's, compiled, by feed name: what `rules apply` applies
    /// (empty unless ``Options/keepsFeedDetails``).
    public let feedRules: [String: PostRules]
    /// The config's `"webhooks"`.
    public let webhooks: [WebhookTarget]
    /// The media archive's settings (`"media"`); `nil`: off.
    public let media: Config.Media?
    /// How the registry keeps the media archive.
    let mediaCapability: MediaArchiveCapability?
    /// The `posts` section of each archived feed whose integration says which credentials its
    /// media may carry, read when the archive is made (``mediaArchiver(log:)``).
    let mediaFeedSections: [MediaFeedSection]
    public let provider: ServiceProvider
    private let log: Logger
    private let storeManager: IntegrationsManager
    private let feedManager: IntegrationsManager

    /// Finds, reads and checks the config, and builds the services `options` asks for; touches nothing.
    ///
    /// - Parameter configPath: `--config`; when `nil`, `./feedsync.json`, else `$FEEDSYNC_CONFIG`.
    /// - Throws: ``ConfigError``.
    public static func load(configPath: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                            _ options: Options = Options()) throws -> Runtime {
        let (url, name) = try locateConfig(configPath, environment: environment)
        let config = try Config.load(from: url, displayName: name, environment: environment, optionLikeNames: options.optionLikeNames,
                                     registry: options.registry)
        config.context.deferMissingSecrets = options.deferMissingSecrets
        let provider = try ServiceProvider(config: config, feeds: options.feeds, sharing: options.sharing, createStore: options.createStore,
                                           log: options.log, traffic: options.traffic, registry: options.registry,
                                           backendsPerSync: options.backendsPerSync)
        return Runtime(configName: name, config: config, provider: provider, log: options.log, registry: options.registry,
                       keepsFeedDetails: options.keepsFeedDetails)
    }

    init(configName: String, config: Config, provider: ServiceProvider, log: Logger, registry: IntegrationRegistry,
         keepsFeedDetails: Bool = true) {
        let detailed = keepsFeedDetails ? config.feeds : []
        self.configName = configName
        self.daemon = config.daemon
        self.metricsListen = config.metricsListen
        self.serve = config.serve
        self.servedFeeds = config.feeds.map { ServedFeed(name: $0.name, group: $0.group) }
        self.searches = config.searches
        self.serving = registry.descriptors.lazy.compactMap(\.serving).first
        self.warnings = config.context.warnings.all
        self.missingSecrets = config.context.missingSecrets.all
        self.feedNames = config.feeds.map(\.name)
        self.feedOrigins = Dictionary(detailed.compactMap { feed in feed.origin.map { (feed.name, $0) } }, uniquingKeysWith: { first, _ in first })
        self.webhooks = config.webhooks
        self.media = config.media
        self.mediaCapability = registry.descriptors.lazy.compactMap(\.media).first
        self.mediaFeedSections = MediaFeedSection.all(config, registry: registry)
        self.feedRules = Dictionary(detailed.map { ($0.name, $0.filter) }, uniquingKeysWith: { first, _ in first })
        self.feedURLs = Dictionary(detailed.compactMap { feed in
            guard let name = (try? feed.posts.string("integration")) ?? nil,
                  let key = registry.descriptor(named: name)?.posts?.locationKey else { return nil }
            return ((try? feed.posts.string(key)) ?? nil).map { (feed.name, $0) }
        }, uniquingKeysWith: { first, _ in first })
        self.provider = provider
        self.log = log
        self.storeManager = IntegrationsManager([provider.store.lifecycle])
        self.feedManager = IntegrationsManager(Array(provider.lifecycles.dropFirst()))
    }

    /// The config file to use and how to name it in messages.
    public static func locateConfig(_ path: String?, environment: [String: String]) throws -> (URL, String) {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        func url(_ path: String) -> URL {
            let expanded = (path as NSString).expandingTildeInPath
            return expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded) : cwd.appendingPathComponent(expanded)
        }
        if let path { return (url(path), path) }
        if FileManager.default.fileExists(atPath: url("feedsync.json").path) { return (url("feedsync.json"), "feedsync.json") }
        if let path = environment["FEEDSYNC_CONFIG"], !path.isEmpty { return (url(path), path) }
        throw ConfigError(file: "feedsync.json", keyPath: "",
                          message: "no such file; pass --config PATH, create ./feedsync.json or set FEEDSYNC_CONFIG")
    }

    /// Sets up every integration: opens the store, loads catalogs.
    public func start() async throws {
        try await storeManager.setUp()
        do {
            try await feedManager.setUp()
        } catch {
            await storeManager.tearDown()
            throw error
        }
    }

    /// Tears every integration down in reverse order.
    ///
    /// - Parameter keepingStore: leave the store open, for the runtime that shares it.
    public func stop(keepingStore: Bool = false) async {
        await feedManager.tearDown()
        if !keepingStore { await storeManager.tearDown() }
    }

    public var store: any FeedStore { provider.store.service }

    /// What the store is, for telling whether a reloaded config moved it: `"sqlite store /var/lib/…"`.
    public var storeName: String { provider.store.lifecycle.name }

    /// For a store kept in local files (``LocalStoreFiles``): its database's path, and whether a
    /// file name in that folder is the database or one of its side files, which no output may replace.
    public var storeFiles: (database: String, isStoreFile: @Sendable (String) -> Bool)? {
        guard let files = provider.store.lifecycle as? any LocalStoreFiles, let database = files.databaseFile else { return nil }
        return (database, { files.isStoreFile(named: $0) })
    }

    /// The feeds whose backends were built.
    public var builtFeedNames: [String] { provider.feeds.map(\.name) }

    /// The sync slots of the built feeds: `daemon.concurrency` of them. Run each sync in one
    /// (``Core/SyncSlots/run(feed:_:)``), so the feed's waits hand it back to the others.
    public var slots: SyncSlots { provider.slots }

    /// The sync engine of a configured feed, with the feed's own limits applied to `options`.
    ///
    /// It waits out a rate limit or a retry's backoff with the feed's sync slot handed back
    /// (when it runs in one of ``slots``).
    /// - Throws: ``ConfigError`` when the config has no such feed.
    public func engine(forFeed name: String, options: SyncEngine.Options = SyncEngine.Options()) throws -> SyncEngine {
        var options = options
        guard let feed = provider.feedIndex[name].map({ provider.feeds[$0] }) else {
            throw ConfigError(file: configName, keyPath: "feeds", message: Self.noSuchFeed(name, among: feedNames))
        }
        options.maxDeletionRatio = feed.maxDeletionRatio
        options.maxAttempts = feed.maxAttempts
        options.rules = feed.rules
        options.retention = feed.retention
        if !webhooks.isEmpty { options.announcer = WebhookAnnouncer(targets: webhooks, now: { Date() }) }
        options.log = log
        let (services, waiter) = provider.services(of: feed)
        return SyncEngine(feed: feed.name, services: services, options: options, sleep: { try await waiter.wait($0) }, waiter: waiter)
    }

    /// `has no feed named "x" (it has "a", "b")`, the same sentence for every command.
    public static func noSuchFeed(_ name: String, among names: [String]) -> String {
        let known = names.isEmpty ? "it lists none" : "it has " + names.map { "\"\($0)\"" }.joined(separator: ", ")
        return "has no feed named \"\(Terminal.safe(name, limit: 80))\" (\(known))"
    }
}
