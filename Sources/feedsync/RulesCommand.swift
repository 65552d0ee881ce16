import App
import Core
import Foundation
import Sync

/// `feedsync rules apply`: the current rules applied to the posts already stored.
enum RulesCommand: Command {
    static let words = ["rules", "apply"]
    static let summary = "Remove the stored posts the current rules block."
    static let synopsis = "rules apply [--config PATH] [--feed NAME] [--dry-run]"
    static let options: [CommandLineOptions.Spec] = [
        .config, .feed, .init("--dry-run", "say what would be removed, and remove nothing"),
    ]
    /// Stored posts read at a time.
    static let pageSize = 1_000
    /// Removed posts named one a line, per feed; the rest are counted.
    static let shownPerFeed = 20

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("rules apply takes no arguments", usage: usage) }
        let dryRun = options.has("--dry-run")
        return try await withRuntime(options, localOnly) { runtime in
            guard let only = options["--feed"] else {
                for feed in runtime.feedNames { try await apply(feed, runtime, dryRun: dryRun, output: output) }
                return .ok
            }
            guard runtime.feedNames.contains(only) else {
                throw ConfigError(file: runtime.configName, keyPath: "feeds", message: Runtime.noSuchFeed(only, among: runtime.feedNames))
            }
            try await apply(only, runtime, dryRun: dryRun, output: output)
            return .ok
        }
    }

    /// Applies the feed's rules to its stored posts: reads them all, then (unless a dry run)
    /// removes the blocked ones in one transaction under the feed's lease, so no sync writes
    /// the feed meanwhile. Read marks of the posts that stay are not touched.
    private static func apply(_ feed: String, _ runtime: Runtime, dryRun: Bool, output: CheckedOutput) async throws {
        let rules = runtime.feedRules[feed] ?? PostRules()
        let store = runtime.store
        var lease: FeedLease?
        if !dryRun, !rules.isEmpty {
            lease = try await store.acquireLease(onFeed: feed, holder: "feedsync rules apply", wait: 30, onlyIfDue: false)
            guard lease != nil else { throw ServiceError(.locked, "applying the rules to feed \(feed)", "another process holds the feed") }
        }
        do {
            try await apply(feed, rules, store, lease: lease, output: output)
        } catch {
            if let lease { await store.release(lease) }
            throw error
        }
        if let lease { await store.release(lease) }
    }

    /// Reads the feed's stored posts (only what rules look at, a page at a time), says which the
    /// rules block, and removes those by id under `lease` (none without one: a dry run).
    private static func apply(_ feed: String, _ rules: PostRules, _ store: any FeedStore, lease: FeedLease?,
                              output: CheckedOutput) async throws {
        let dryRun = lease == nil
        var total = 0
        var blocked: [(PostID, String)] = []
        var after: Int64?
        repeat {
            let page = try await store.ruleSubjects(ofFeed: feed, after: after, limit: pageSize)
            total += page.posts.count
            if !rules.isEmpty {
                for post in page.posts {
                    if let rule = rules.decidingRule(for: post), rule.action == .block { blocked.append((post.id, rule.keyPath)) }
                }
            }
            after = page.next
        } while after != nil
        for (id, rule) in blocked.prefix(shownPerFeed) {
            try output.line("\(feed)/\(Terminal.safe(id.rawValue, limit: 200))  blocked by \(rule)")
        }
        if blocked.count > shownPerFeed { try output.line("… and \(blocked.count - shownPerFeed) more") }
        if dryRun || blocked.isEmpty {
            try output.line("\(feed): \(dryRun && !rules.isEmpty ? "would remove" : "removed") \(blocked.count) of \(total) stored posts"
                            + (rules.isEmpty ? " (the feed has no rules)" : "") + (dryRun && !blocked.isEmpty ? " (dry run: nothing removed)" : ""))
            return
        }
        guard let lease else { return }
        let removed = try await store.removePosts(blocked.map(\.0), under: lease)
        try output.line("\(feed): removed \(removed) of \(total) stored posts")
    }
}
