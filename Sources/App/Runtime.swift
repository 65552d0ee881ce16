import Core
import Foundation
import Sync

/// A loaded config with its services built: what both executables run on.
///
///     let runtime = try Runtime.load(configPath: options["--config"])
///     try await runtime.start()
///     defer { await runtime.stop() }
///     let report = try await runtime.engine(forFeed: "home").run()
public struct Runtime: Sendable {
    /// The config file in use, as the operator named it.
    public let configName: String
    /// The daemon's settings from the config.
    public let daemon: Config.Daemon
    /// Warnings from reading the config, each one sentence.
    public let warnings: [String]
    public let provider: ServiceProvider
    private let manager: IntegrationsManager

    /// Finds, reads and checks the config, and builds every service from it; touches nothing.
    ///
    /// - Parameter configPath: `--config`; when `nil`, `./feedsync.json`, else `$FEEDSYNC_CONFIG`.
    /// - Throws: ``ConfigError``.
    public static func load(configPath: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Runtime {
        let (url, name) = try locateConfig(configPath, environment: environment)
        let config = try Config.load(from: url, displayName: name, environment: environment)
        let provider = try ServiceProvider(config: config)
        return Runtime(configName: name, daemon: config.daemon, warnings: config.context.warnings.all, provider: provider)
    }

    init(configName: String, daemon: Config.Daemon, warnings: [String], provider: ServiceProvider) {
        self.configName = configName
        self.daemon = daemon
        self.warnings = warnings
        self.provider = provider
        self.manager = IntegrationsManager(provider.lifecycles)
    }

    /// The config file to use and how to name it in messages.
    static func locateConfig(_ path: String?, environment: [String: String]) throws -> (URL, String) {
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
    public func start() async throws { try await manager.setUp() }

    /// Tears every integration down in reverse order.
    public func stop() async { await manager.tearDown() }

    public var store: any FeedStore { provider.store }

    public var feedNames: [String] { provider.feeds.map(\.name) }

    /// The sync engine of a configured feed, with the feed's own limits applied to `options`.
    /// - Throws: ``ConfigError`` when the config has no such feed.
    public func engine(forFeed name: String, options: SyncEngine.Options = SyncEngine.Options()) throws -> SyncEngine {
        var options = options
        guard let feed = provider.feeds.first(where: { $0.name == name }) else {
            let known = feedNames.map { "\"\($0)\"" }.joined(separator: ", ")
            throw ConfigError(file: configName, keyPath: "feeds", message: "has no feed named \"\(name)\" (it has \(known))")
        }
        options.maxDeletionRatio = feed.maxDeletionRatio
        options.maxAttempts = feed.maxAttempts
        return SyncEngine(feed: feed.name, services: feed.services, options: options)
    }
}
