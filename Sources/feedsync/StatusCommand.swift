import App
import Core
import Foundation

/// `feedsync status`: per feed, where its sync stands.
enum StatusCommand: Command {
    static let words = ["status"]
    static let summary = "Show each feed's sync state, the daemons serving the store, and who holds which feed."
    static let synopsis = "status [--config PATH] [--json]"
    static let options: [CommandLineOptions.Spec] = [.config, .json]

    /// What `--json` prints: the daemons, and one row per feed.
    struct Report: Encodable {
        /// The first of `daemons`, for a store one daemon serves (SQLite).
        var daemon: Daemon?
        var daemons: [Daemon]
        var feeds: [Row]
        /// The media archive's counts and bytes, when the config has `"media"`.
        var media: MediaReport?
    }

    /// A daemon recorded in the store.
    struct Daemon: Encodable {
        var host: String
        var pid: Int32?
        var startedAt: Date
        var lastBeatAt: Date
        var secondsSinceBeat: Int
        /// Whether that process still runs: asked of the kernel on this machine, judged by its
        /// heartbeat (within three `daemon.heartbeat` periods) on another.
        var running: Bool
    }

    /// One feed's status.
    struct Row: Encodable {
        var feed: String
        var configured: Bool
        var cursor: String?
        var lastSuccessAt: Date?
        var lastErrorAt: Date?
        var lastError: String?
        var consecutiveFailures: Int
        var nextAttemptAt: Date?
        var postCount: Int
        /// Where a web feed is now read from, after a permanent redirect or a discovery.
        var location: String?
        /// The HTML page `location` was discovered on; `nil` when the server moved the feed.
        var discoveredFrom: String?
        /// Why polling stopped (a 410 Gone), until the feed's config changes.
        var pollingStopped: String?
        /// The daemon or command that holds the feed's lease now, if the store tells.
        var leaseHolder: String?
        /// Why the last walk from the start deleted nothing as gone, until a later one sweeps.
        var sweepWithheld: String?
        /// How many posts the feed's `"keep"` removed, in all, and when it last removed any.
        var prunedPosts: Int
        var prunedAt: Date?
        /// A streaming feed's state while feedsyncd runs: `live since …` or `polling: <reason>`.
        var live: String?
    }

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("status takes no arguments", usage: usage) }
        let report = try await withRuntime(options, localOnly) { runtime in
            let stored = Dictionary(uniqueKeysWithValues: try await runtime.store.feedStatuses().map { ($0.feed, $0) })
            let live = try await runtime.store.liveStates()
            let names = runtime.feedNames + stored.keys.filter { !runtime.feedNames.contains($0) }.sorted()
            let rows = names.map { name in
                let status = stored[name] ?? FeedStatus(feed: name)
                return Row(feed: name, configured: runtime.feedNames.contains(name), cursor: status.cursor?.position,
                           lastSuccessAt: status.lastSuccessAt, lastErrorAt: status.lastErrorAt,
                           lastError: status.lastError, consecutiveFailures: status.consecutiveFailures,
                           nextAttemptAt: status.nextAttemptAt, postCount: status.postCount,
                           location: status.location, discoveredFrom: status.discoveredFrom, pollingStopped: status.pollingStopped, leaseHolder: status.leaseHolder,
                           sweepWithheld: status.sweepWithheld, prunedPosts: status.prunedPosts, prunedAt: status.prunedAt, live: live[name])
            }
            let here = ProcessInfo.processInfo.hostName
            let daemons = try await runtime.store.daemons().map { beat in
                let pid = Int32(beat.process)
                let seconds = max(0, Int(Date().timeIntervalSince(beat.beatAt)))
                let running = if beat.host == here, let pid { kill(pid, 0) == 0 || errno == EPERM }
                              else { Double(seconds) <= 3 * runtime.daemon.heartbeat }
                return Daemon(host: beat.host, pid: pid, startedAt: beat.startedAt, lastBeatAt: beat.beatAt,
                              secondsSinceBeat: seconds, running: running)
            }
            return Report(daemon: daemons.first, daemons: daemons, feeds: rows, media: try await MediaReport.of(runtime))
        }
        if options.has("--json") {
            try printJSON(to: output, report)
            return .ok
        }
        if report.daemons.isEmpty { try output.line("daemon: none holds this store") }
        for daemon in report.daemons {
            let state = daemon.running ? "running" : "not running (it did not stop cleanly)"
            try output.line("daemon: feedsyncd pid \(daemon.pid.map { "\($0)" } ?? "?") on \(Terminal.safe(daemon.host, limit: 100)), \(state); "
                  + "last beat \(daemon.secondsSinceBeat) s ago")
        }
        for row in report.feeds {
            try output.line("\(row.feed)\(row.configured ? "" : " (no longer in the config)")")
            try output.line("  posts:        \(row.postCount)")
            try output.line("  cursor:       \(row.cursor.map { Terminal.safe($0, limit: 200) } ?? "- (never synced)")")
            try output.line("  last success: \(formatted(row.lastSuccessAt))")
            try output.line("  last error:   \(row.lastError.map { "\(formatted(row.lastErrorAt)) \(Terminal.safe($0, limit: 1_000))" } ?? "-")")
            try output.line("  failures:     \(row.consecutiveFailures) in a row")
            try output.line("  next attempt: \(formatted(row.nextAttemptAt))")
            if let live = row.live { try output.line("  stream:       \(Terminal.safe(live, limit: 1_000))") }
            if let holder = row.leaseHolder { try output.line("  syncing now:  \(Terminal.safe(holder, limit: 200))") }
            if let location = row.location {
                if let page = row.discoveredFrom {
                    try output.line("  discovered:   \(Terminal.safe(location, limit: 300)) (the feed the page \(Terminal.safe(page, limit: 300)) names)")
                } else {
                    try output.line("  moved to:     \(Terminal.safe(location, limit: 300)) (the server moved it permanently)")
                }
            }
            if let stopped = row.pollingStopped { try output.line("  stopped:      \(Terminal.safe(stopped, limit: 1_000))") }
            if let at = row.prunedAt {
                try output.line("  retention:    removed \(row.prunedPosts) post\(row.prunedPosts == 1 ? "" : "s"), last at \(formatted(at))")
            }
            if let withheld = row.sweepWithheld { try output.line("  no sweep:     \(Terminal.safe(withheld, limit: 1_000))") }
        }
        if let media = report.media { try output.line(media.line) }
        return .ok
    }
}
