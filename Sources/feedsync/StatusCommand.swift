import App
import Core
import Foundation

/// `feedsync status`: per feed, where its sync stands.
enum StatusCommand: Command {
    static let words = ["status"]
    static let summary = "Show each feed's sync state, and whether a daemon holds the store."
    static let synopsis = "status [--config PATH] [--json]"
    static let options: [CommandLineOptions.Spec] = [.config, .json]

    /// What `--json` prints: the daemon, and one row per feed.
    struct Report: Encodable {
        var daemon: Daemon?
        var feeds: [Row]
    }

    /// The daemon that last beat in the store.
    struct Daemon: Encodable {
        var pid: Int32
        var startedAt: Date
        var lastBeatAt: Date
        var secondsSinceBeat: Int
        /// Whether that process still runs on this machine.
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
        /// Where a web feed is now read from, after a permanent redirect.
        var location: String?
        /// Why polling stopped (a 410 Gone), until the feed's config changes.
        var pollingStopped: String?
    }

    static func run(_ options: CommandLineOptions) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("status takes no arguments", usage: usage) }
        let report = try await withRuntime(options, localOnly) { runtime in
            let stored = Dictionary(uniqueKeysWithValues: try await runtime.store.feedStatuses().map { ($0.feed, $0) })
            let names = runtime.feedNames + stored.keys.filter { !runtime.feedNames.contains($0) }.sorted()
            let rows = names.map { name in
                let status = stored[name] ?? FeedStatus(feed: name)
                return Row(feed: name, configured: runtime.feedNames.contains(name), cursor: status.cursor?.position,
                           lastSuccessAt: status.lastSuccessAt, lastErrorAt: status.lastErrorAt,
                           lastError: status.lastError, consecutiveFailures: status.consecutiveFailures,
                           nextAttemptAt: status.nextAttemptAt, postCount: status.postCount,
                           location: status.location, pollingStopped: status.pollingStopped)
            }
            let daemon = try await runtime.store.heartbeat().map { beat in
                Daemon(pid: beat.pid, startedAt: beat.startedAt, lastBeatAt: beat.beatAt,
                       secondsSinceBeat: max(0, Int(Date().timeIntervalSince(beat.beatAt))),
                       running: kill(beat.pid, 0) == 0 || errno == EPERM)
            }
            return Report(daemon: daemon, feeds: rows)
        }
        if options.has("--json") {
            try printJSON(report)
            return .ok
        }
        if let daemon = report.daemon {
            let state = daemon.running ? "running" : "not running (it did not stop cleanly)"
            print("daemon: feedsyncd pid \(daemon.pid), \(state); last beat \(daemon.secondsSinceBeat) s ago")
        } else {
            print("daemon: none holds this store")
        }
        for row in report.feeds {
            print("\(row.feed)\(row.configured ? "" : " (no longer in the config)")")
            print("  posts:        \(row.postCount)")
            print("  cursor:       \(row.cursor.map { Terminal.safe($0, limit: 200) } ?? "- (never synced)")")
            print("  last success: \(formatted(row.lastSuccessAt))")
            print("  last error:   \(row.lastError.map { "\(formatted(row.lastErrorAt)) \(Terminal.safe($0, limit: 1_000))" } ?? "-")")
            print("  failures:     \(row.consecutiveFailures) in a row")
            print("  next attempt: \(formatted(row.nextAttemptAt))")
            if let location = row.location { print("  moved to:     \(Terminal.safe(location, limit: 300)) (the server moved it permanently)") }
            if let stopped = row.pollingStopped { print("  stopped:      \(Terminal.safe(stopped, limit: 1_000))") }
        }
        return .ok
    }
}
