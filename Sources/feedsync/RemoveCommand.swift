import App
import Core
import Foundation

/// `feedsync remove NAME [--purge]`: takes a feed out of the config; its posts stay in the
/// store unless `--purge`.
enum RemoveCommand: Command {
    static let words = ["remove"]
    static let summary = "Take a feed out of the config (its posts stay unless --purge)."
    static let synopsis = "remove NAME [--purge] [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [
        .config,
        .init("--purge", "also delete the feed's posts, authors, videos, read marks, runs and cursor from the store, and its archived media"),
    ]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 1, let name = options.positionals.first, !name.isEmpty else {
            throw UsageError("name the feed to remove", usage: usage)
        }
        let shown = Terminal.safe(name, limit: 80)
        // A feed named before names that begin with '-' were refused can still be taken out: `remove -- -x`.
        var editor = try ConfigEditor(configPath: options["--config"], optionLikeNames: true, registry: FeedsyncCLI.registry)
        guard editor.existed else {
            throw ConfigError(file: editor.displayName, keyPath: "", message: "no such file; nothing to remove \(shown) from")
        }
        do {
            try editor.removeFeed(named: name, usage: usage)
        } catch let error as UsageError {
            // A feed removed earlier without --purge: its posts can still be purged.
            guard options.has("--purge"), try await stored(name, editor), !(try editor.feedNames().contains(name)) else { throw error }
            let posts = try await purge(name, editor)
            try output.line("\(shown) is not in \(editor.displayName); purged its \(posts) stored post\(posts == 1 ? "" : "s") with its authors, videos, read marks, runs and cursor")
            return .ok
        }
        try await ConfigChange.commit(editor, options, output, saying: "removed feed \(shown) from \(editor.displayName)")
        guard options.has("--purge") else {
            let again = name.hasPrefix("-") ? "--purge -- \(shown)" : "\(shown) --purge"
            try output.line("its posts stay in the store; `feedsync remove \(again)` would delete them")
            return .ok
        }
        let posts = try await purge(name, editor)
        try output.line("purged \(posts) post\(posts == 1 ? "" : "s") of \(shown) from the store, with its authors, videos, read marks, runs and cursor")
        return .ok
    }

    /// Deletes what the store keeps for `feed`; 0 when there is no store yet.
    static func purge(_ feed: String, _ editor: ConfigEditor) async throws -> Int {
        var load = localOnly
        load.notice = { _ in }
        do {
            return try await withRuntime(CommandLineOptions.config(editor.url.path), load) { runtime in
                let posts = try await runtime.store.purge(feed: feed)
                // The purge dropped the feed's media references: its files go unless another feed's posts point at them.
                if let (archiver, fetcher) = try await runtime.mediaArchiver(log: .disabled) {
                    let pruned = try await archiver.prune()
                    await fetcher.close()
                    if pruned.files > 0 { printError("feedsync: removed \(pruned.files) media file\(pruned.files == 1 ? "" : "s") (\(pruned.bytes) bytes) no other feed refers to") }
                }
                return posts
            }
        } catch let error as ServiceError {
            // No store file yet: nothing was ever synced, so there is nothing to purge.
            guard case .notFound = error.code else { throw error }
            return 0
        }
    }

    /// Whether the store holds anything of `feed`.
    static func stored(_ feed: String, _ editor: ConfigEditor) async throws -> Bool {
        var load = localOnly
        load.notice = { _ in }
        let names = try? await withRuntime(CommandLineOptions.config(editor.url.path), load) { try await $0.store.feedNames() }
        return names?.contains(feed) ?? false
    }
}
