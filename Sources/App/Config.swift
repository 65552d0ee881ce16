import Core
import Foundation
import Sync

/// The config file, read and checked: the store section, the feeds, the daemon settings.
///
/// Integration sections are kept unread here; ``ServiceProvider`` hands each to the
/// integration its `"integration"` key names, which reads and checks it.
public struct Config {
    /// One feed: where its posts come from and how often it syncs.
    public struct Feed {
        public var name: String
        public var interval: TimeInterval
        public var posts: ConfigSection
        public var videos: ConfigSection?
        /// The largest fraction of the feed a `pull --full` may delete as gone from the server.
        public var maxDeletionRatio: Double
        /// How many times a sync tries a call that fails transiently before it gives up.
        public var maxAttempts: Int
        /// Where a feed expanded from an OPML file came from, for `config check`; `nil` otherwise.
        public var origin: String? = nil
        /// The group (a label in reader apps) the feed belongs to (`"group"`), if any.
        public var group: String? = nil
        /// The feed's own `"rules"`, asked before the config's.
        public var rules: [Rule] = []
        /// The feed's rules then the config's, compiled.
        public var filter = PostRules()
        /// The feed's `"keep"`, or else the config's; `nil`: posts are kept for ever.
        public var retention: Retention?
        /// The feed's `"media"`, read into ``Config/media`` once every feed is known.
        public var media: FeedMedia = .inherited
    }

    /// The reader listener (the `"serve"` section): off unless it is there.
    public struct Serve: Sendable, Equatable {
        public var listen: ListenAddress
        /// Whether a reverse proxy in front terminates TLS, so a non-loopback address may serve plain HTTP.
        public var behindProxy: Bool
        /// The certificate and key the listener serves HTTPS with (`"tls"`); `nil`: plain HTTP.
        public var tls: TLSContext.Files? = nil
    }

    /// How `feedsyncd` schedules (the `"daemon"` section; every key optional).
    public struct Daemon: Sendable, Equatable {
        /// Syncs running at once.
        public var concurrency = 4
        /// Requests in flight to one host at once, across all feeds.
        public var maxRequestsPerHost = 1
        /// The longest wait between retries of a failing feed.
        public var maxBackoff: TimeInterval = 3600
        /// How often the daemon records that it is alive.
        public var heartbeat: TimeInterval = 30
        /// How long a daemon sync waits for another process's write lock on the store.
        public var lockWait: TimeInterval = 60

        public init() {}
    }

    public var context: ConfigContext
    public var store: ConfigSection
    public var feeds: [Feed]
    public var daemon = Daemon()
    /// Where `feedsyncd` serves `/metrics` and `/healthz` (`"metrics": {"listen": …}`); `nil`: off.
    public var metricsListen: ListenAddress?
    /// The reader listener (`"serve"`); `nil`: off.
    public var serve: Serve?
    /// Saved searches served as feeds (`"searches": {"rust": "rust OR swift"}`), by name.
    public var searches: [String: String] = [:]
    /// The config's own `"rules"`, asked after each feed's (`docs/rules.md`).
    public var rules: [Rule] = []
    /// Where feedsyncd POSTs what it stored (`"webhooks"`).
    public var webhooks: [WebhookTarget] = []
    /// The media archive (`"media"`, `docs/media.md`); `nil`: off.
    public var media: Media?

    /// Reads and checks the file at `url`.
    ///
    /// - Parameters:
    ///   - displayName: the path as the operator wrote it, for messages.
    ///   - optionLikeNames: whether a feed name that begins with `-` (refused since) is read
    ///     rather than refused: `remove` and `logout` take such a feed out of an old config.
    ///   - registry: where the defaults come from: the store of a config without one, the
    ///     integration that reads an `"opml"` entry's file.
    /// - Throws: ``ConfigError`` naming the file, the key path and what is wrong.
    public static func load(from url: URL, displayName: String, environment: [String: String],
                            optionLikeNames: Bool = false, registry: IntegrationRegistry = .standard) throws -> Config {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw ConfigError(file: displayName, keyPath: "", message: exists ? (DescriptorLimit.reasonIfExhausted() ?? "cannot be read") : "no such file")
        }
        let context = ConfigContext(fileName: displayName, directory: url.deletingLastPathComponent(), environment: environment)
        let root: ConfigValue
        do {
            root = try ConfigJSON.parse(data)
        } catch {
            throw ConfigError(file: displayName, keyPath: "", message: "is not valid JSON: \(error)")
        }
        guard case .object(let object) = root else {
            throw ConfigError(file: displayName, keyPath: "", message: "expected a JSON object at the top, found \(root.kind)")
        }
        return try Config(ConfigSection(object, path: "", context: context), optionLikeNames: optionLikeNames, registry: registry)
    }

    /// The shortest `interval` a feed may have.
    static let minimumInterval: TimeInterval = 10
    /// The longest any duration may be.
    static let maximumDuration: TimeInterval = 30 * 86_400

    init(_ root: ConfigSection, optionLikeNames: Bool = false, registry: IntegrationRegistry = .standard) throws {
        context = root.context
        // The end-to-end tests poll in fractions of a second; nothing else should.
        let short = root.context.environment["FEEDSYNC_TEST_SHORT_INTERVALS"] == "1"
        let intervals = (short ? 0.1 : Self.minimumInterval)...Self.maximumDuration
        let seconds = (short ? 0.1 : 1)...Self.maximumDuration
        store = try root.section("store") ?? ConfigSection(["integration": .string(registry.defaultStore.name)], path: "store", context: root.context)
        // `"feeds": []` is a config too: the last feed can be removed or logged out of, `pull`
        // then has nothing to do, and `feedsyncd` waits for a reload that adds one.
        let feedSections = try root.require(root.sections("feeds"), "feeds")
        var names = Set<String>()
        let pending = try feedSections.flatMap { section -> [PendingFeed] in
            if section.has("opml") { return try Self.expandOPML(section, intervals: intervals, names: &names, registry: registry) }
            let name = try section.require(section.nonEmptyString("name"), "name")
            if let problem = FeedName.problem(name), !(optionLikeNames && FeedName.isValid("x" + name)) {
                let remedy = name.hasPrefix("-") && FeedName.isValid("x" + name) ? " (or take the feed out with `feedsync remove -- \(name)`)" : ""
                throw section.error("name", problem + remedy)
            }
            guard names.insert(name).inserted else { throw section.error("name", "\"\(name)\" names two feeds") }
            let feed = Feed(name: name, interval: try section.duration("interval", in: intervals) ?? 300,
                            posts: try section.require(section.section("posts"), "posts"),
                            videos: try section.section("videos"),
                            maxDeletionRatio: try section.double("maxDeletionRatio", in: 0...1) ?? 0.5,
                            maxAttempts: try section.int("maxAttempts", in: 1...20) ?? 6,
                            group: try Self.group(section),
                            rules: try Self.rules(in: section), retention: try Self.retention(in: section),
                            media: try Self.feedMedia(section))
            try section.finish()
            return [.named(feed)]
        }
        // Site-only OPML outlines are named once every other feed has its name.
        feeds = pending.map { feed in
            switch feed {
            case .named(let feed): feed
            case .site(let base, let make): make(FeedNaming.unique(base, in: &names))
            }
        }
        rules = try Self.rules(in: root)
        let retention = try Self.retention(in: root)
        for index in feeds.indices {
            if feeds[index].retention == nil { feeds[index].retention = retention }
            feeds[index].filter = try Self.compiledRules(feeds[index].rules, rules, file: context.fileName)
        }
        var warned = Set<String>()
        for feed in feeds {
            guard let rule = feed.filter.blockingEverything, warned.insert(rule.keyPath).inserted else { continue }
            context.warnings.add("\(context.fileName): \(rule.keyPath): blocks every post (it gives no criterion and no keep rule "
                                 + "comes before it), so feed \(feed.name) stores nothing new; give it a criterion or put keep rules first")
        }
        if let section = try root.section("daemon") {
            daemon.concurrency = try section.int("concurrency", in: 1...64) ?? daemon.concurrency
            daemon.maxRequestsPerHost = try section.int("maxRequestsPerHost", in: 1...64) ?? daemon.maxRequestsPerHost
            daemon.maxBackoff = try section.duration("maxBackoff", in: seconds) ?? daemon.maxBackoff
            daemon.heartbeat = try section.duration("heartbeat", in: seconds) ?? daemon.heartbeat
            daemon.lockWait = try section.duration("lockWait", in: 0.1...86_400) ?? daemon.lockWait
            try section.finish()
        }
        if let section = try root.section("metrics") {
            let text = try section.require(section.nonEmptyString("listen"), "listen")
            do {
                metricsListen = try ListenAddress(text)
            } catch {
                throw section.error("listen", error.description)
            }
            try section.finish()
        }
        if let section = try root.section("serve") {
            serve = try Self.serve(section)
        }
        if let section = try root.section("searches") {
            for name in section.keys {
                guard FeedName.isValid(name), name.count <= 64 else {
                    throw section.error(name, "a search's name is 1 to 64 letters, digits, '-', '_' or '.', not beginning with '-'")
                }
                let query = try section.require(section.nonEmptyString(name), name)
                guard query.count <= 500 else { throw section.error(name, "a search is at most 500 characters") }
                searches[name] = query
            }
            try section.finish()
        }
        webhooks = try Self.webhooks(in: root, feeds: feeds.map(\.name), listener: metricsListen)
        media = try Self.media(in: root, feeds: feeds)
        try root.finish(alsoKnown: ["$comment"])
    }

    /// A feed's `"group"`: 1 to 100 characters, no control character, no `/`.
    private static func group(_ section: ConfigSection) throws -> String? {
        guard let group = try section.nonEmptyString("group") else { return nil }
        guard group.count <= 100, !group.contains("/"), !group.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw section.error("group", "a group is 1 to 100 characters, without \"/\" or control characters")
        }
        return group
    }

    /// The `"serve"` section: plain HTTP on loopback only, unless the listener serves TLS itself
    /// (`"tls"`) or a proxy in front terminates it. The files are read when the listener starts.
    private static func serve(_ section: ConfigSection) throws -> Serve {
        let text = try section.require(section.nonEmptyString("listen"), "listen")
        let listen: ListenAddress
        do {
            listen = try ListenAddress(text)
        } catch {
            throw section.error("listen", error.description)
        }
        let behindProxy = try section.bool("behindProxy") ?? false
        var tls: TLSContext.Files?
        if let files = try section.section("tls") {
            let certificate = try files.require(files.path("certificate"), "certificate")
            let key = try files.require(files.path("key"), "key")
            try files.finish()
            tls = TLSContext.Files(certificate: certificate.path, key: key.path)
        }
        guard listen.isLoopback || behindProxy || tls != nil else {
            throw section.error("listen", "\(listen) is not a loopback address: plain HTTP would carry passwords and tokens in the clear; "
                                + "listen on 127.0.0.1, give \"tls\": {\"certificate\": …, \"key\": …}, "
                                + "or put a proxy that terminates TLS in front and set \"behindProxy\": true")
        }
        try section.finish()
        return Serve(listen: listen, behindProxy: behindProxy, tls: tls)
    }
}
