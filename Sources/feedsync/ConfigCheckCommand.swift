import App
import Core

/// `feedsync config check`: reads and checks the config without touching anything.
enum ConfigCheckCommand: Command {
    static let words = ["config", "check"]
    static let summary = "Check the config file and say what is wrong, changing nothing."
    static let synopsis = "config check [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("config check takes no arguments", usage: usage) }
        var load = Runtime.Options()
        load.registry = FeedsyncCLI.registry
        load.deferMissingSecrets = true
        let runtime = try Runtime.load(configPath: options["--config"], load)
        for warning in runtime.warnings { printError("feedsync: warning: \(Terminal.safe(warning))") }
        if let files = runtime.serve?.tls {
            _ = try ReaderListener.tlsContext(for: runtime)
            for warning in TLSContext.warnings(files, keyPath: "serve.tls") { printError("feedsync: warning: \(Terminal.safe(warning))") }
        }
        let feeds = runtime.feedNames
        if feeds.isEmpty {
            printError("feedsync: warning: \(Terminal.safe(runtime.configName, limit: 300)) lists no feeds; `feedsync pull` has nothing to do "
                       + "and feedsyncd syncs nothing until a reload adds one (`feedsync add` or `feedsync login` adds one)")
        }
        let listed = feeds.isEmpty ? "" : " (\(feeds.joined(separator: ", ")))"
        try output.line("\(runtime.configName): ok; \(feeds.count) feed\(feeds.count == 1 ? "" : "s")\(listed)")
        for lifecycle in runtime.provider.lifecycles { try output.line("  \(Terminal.safe(lifecycle.name, limit: 300))") }
        let expanded = feeds.filter { runtime.feedOrigins[$0] != nil }
        if !expanded.isEmpty {
            try output.line("expanded from OPML: \(expanded.count) feed\(expanded.count == 1 ? "" : "s")")
            for name in expanded { try output.line("  \(name) <- \(Terminal.safe(runtime.feedOrigins[name] ?? "", limit: 400))") }
        }
        try await showLocations(in: runtime, output)
        if let address = runtime.metricsListen {
            // A running feedsyncd holds its own port, so a port in use is a warning here, not an error.
            if let problem = HTTPListener.problem(binding: address) {
                printError("feedsync: warning: metrics.listen: \(problem); feedsyncd will exit 78 unless the port is free when it starts")
            } else {
                print("metrics: feedsyncd will serve /metrics and /healthz on \(address)\(address.isLoopback ? "" : " (reachable from other machines)")")
            }
        }
        // A secret this environment lacks is not a fault of the file: say so, and what needs it.
        for missing in runtime.missingSecrets {
            printError("feedsync: warning: secret not available here: \(Terminal.safe(missing)); `feedsync pull` and feedsyncd will need it")
        }
        return .ok
    }

    /// Where the store polls feeds now that it does not poll at their configured `url`: a web
    /// feed discovered on the page the config names, or moved by its server.
    ///
    /// The store is only looked at, by a store that can (``ReadOnlyStoreSetup``: a local file
    /// opened read-only, a server given seconds and read in read-only transactions), and a store
    /// that does not exist or needs an upgrade is not read. One line says when it was not read, and why.
    static func showLocations(in runtime: Runtime, _ output: CheckedOutput) async throws {
        guard let look = runtime.provider.store.lifecycle as? any ReadOnlyStoreSetup else { return }
        let feeds = runtime.feedNames
        let statuses: [FeedStatus]
        do {
            try await look.setUpToRead()
            statuses = try await runtime.store.feedStatuses()
            await look.tearDown()
        } catch {
            await look.tearDown()
            let reason = (error as? ServiceError)?.reason ?? "\(error)"
            try output.line("store: what it remembers (feeds discovered or moved) was not read: \(Terminal.safe(reason, limit: 300))")
            return
        }
        warnOfTwins(among: feeds, urls: runtime.feedURLs, statuses: statuses)
        let moved = statuses.filter { feeds.contains($0.feed) && $0.location != nil }
        guard !moved.isEmpty else { return }
        try output.line("polled elsewhere (as the store remembers): \(moved.count) feed\(moved.count == 1 ? "" : "s")")
        for status in moved {
            let location = Terminal.safe(status.location ?? "", limit: 300)
            if let page = status.discoveredFrom {
                try output.line("  \(status.feed): discovered \(location) on the page \(Terminal.safe(page, limit: 300))")
            } else {
                try output.line("  \(status.feed): moved to \(location) (the server moved it permanently)")
            }
        }
    }

    /// Warns of feeds that poll one feed, as the store remembers where each polls: a site (an
    /// OPML outline with only an `htmlUrl`) whose page names a feed another entry's `url` names
    /// already. Each mirrors it, so its posts are stored twice.
    static func warnOfTwins(among feeds: [String], urls: [String: String], statuses: [FeedStatus]) {
        let locations = Dictionary(statuses.compactMap { status in status.location.map { (status.feed, $0) } }, uniquingKeysWith: { first, _ in first })
        var byURL: [String: [String]] = [:]
        for feed in feeds {
            guard let url = locations[feed] ?? urls[feed] else { continue }
            byURL[url, default: []].append(feed)
        }
        for (url, names) in byURL.sorted(by: { $0.key < $1.key }) where names.count > 1 {
            printError("feedsync: warning: feeds \(names.joined(separator: " and ")) poll the same feed \(Terminal.safe(url, limit: 300)), "
                       + "so its posts are stored under each name; take all but one out of the config (or give the OPML outline its xmlUrl)")
        }
    }
}
