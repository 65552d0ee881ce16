import App
import Core
import Foundation

/// `feedsync status`: per feed, where its sync stands.
enum StatusCommand: Command {
    static let words = ["status"]
    static let summary = "Show each feed's cursor, last success, last error and post count."
    static let synopsis = "status [--config PATH] [--json]"
    static let options: [CommandLineOptions.Spec] = [.config, .json]

    /// One feed's status as `--json` prints it.
    struct Row: Encodable {
        var feed: String
        var configured: Bool
        var cursor: String?
        var lastSuccessAt: Date?
        var lastErrorAt: Date?
        var lastError: String?
        var postCount: Int
    }

    static func run(_ options: CommandLineOptions) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("status takes no arguments", usage: usage) }
        let rows = try await withRuntime(options) { runtime in
            let stored = Dictionary(uniqueKeysWithValues: try await runtime.store.feedStatuses().map { ($0.feed, $0) })
            let names = runtime.feedNames + stored.keys.filter { !runtime.feedNames.contains($0) }.sorted()
            return names.map { name in
                let status = stored[name] ?? FeedStatus(feed: name)
                return Row(feed: name, configured: runtime.feedNames.contains(name), cursor: status.cursor?.position,
                           lastSuccessAt: status.lastSuccessAt, lastErrorAt: status.lastErrorAt,
                           lastError: status.lastError, postCount: status.postCount)
            }
        }
        if options.has("--json") {
            try printJSON(rows)
        } else {
            for row in rows {
                print("\(row.feed)\(row.configured ? "" : " (no longer in the config)")")
                print("  posts:        \(row.postCount)")
                print("  cursor:       \(row.cursor ?? "- (never synced)")")
                print("  last success: \(formatted(row.lastSuccessAt))")
                print("  last error:   \(row.lastError.map { "\(formatted(row.lastErrorAt)) \($0)" } ?? "-")")
            }
        }
        return .ok
    }
}
