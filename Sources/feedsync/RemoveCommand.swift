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
        .init("--purge", "also delete the feed's posts, authors, videos, read marks, runs and cursor from the store"),
    ]

    static func run(_ options: CommandLineOptions) async throws -> ExitStatus {
        guard options.positionals.count == 1, let name = options.positionals.first, !name.isEmpty else {
            throw UsageError("name the feed to remove", usage: usage)
        }
        let shown = Terminal.safe(name, limit: 80)
        var editor = try ConfigEditor(configPath: options["--config"])
        guard editor.existed else {
            throw ConfigError(file: editor.displayName, keyPath: "", message: "no such file; nothing to remove \(shown) from")
        }
        let entries = try editor.entries()
        if entries.count == 1, entries[0].name == name {
            throw ConfigError(file: editor.displayName, keyPath: "feeds",
                              message: "\(shown) is its only feed and a config must list one; add another first (nothing was changed)")
        }
        try editor.removeFeed(named: name, usage: usage)
        try await ConfigChange.commit(editor, options, saying: "removed feed \(shown) from \(editor.displayName)")
        guard options.has("--purge") else {
            print("its posts stay in the store; `feedsync remove \(shown) --purge` would delete them")
            return .ok
        }
        var load = localOnly
        load.notice = { _ in }
        let posts: Int
        do {
            posts = try await withRuntime(CommandLineOptions.config(editor.url.path), load) { runtime in
                try await runtime.store.purge(feed: name)
            }
        } catch let error as ServiceError {
            // No store file yet: nothing was ever synced, so there is nothing to purge.
            guard case .notFound = error.code else { throw error }
            posts = 0
        }
        print("purged \(posts) post\(posts == 1 ? "" : "s") of \(shown) from the store, with its authors, videos, read marks, runs and cursor")
        return .ok
    }
}
