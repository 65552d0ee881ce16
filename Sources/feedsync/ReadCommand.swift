import App
import Core

/// `feedsync read ID` and `feedsync unread ID`: local read marks that no sync changes.
enum ReadCommand: Command {
    static let words = ["read"]
    static let summary = "Mark a post read."
    static let synopsis = "read ID [--config PATH] [--feed NAME]"
    static let options: [CommandLineOptions.Spec] = [.config, .feed]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        try await mark(read: true, options, output: output, usage: usage)
    }

    /// Marks the post `ID` names: an id as `posts` prints it (`feed/id`), or a bare id,
    /// with `--feed` when several feeds hold it.
    static func mark(read: Bool, _ options: CommandLineOptions, output: CheckedOutput, usage: String) async throws -> ExitStatus {
        guard options.positionals.count == 1, let given = options.positionals.first, !given.isEmpty else {
            throw UsageError("give exactly one post ID", usage: usage)
        }
        let (feeds, id) = try await withRuntime(options, localOnly) { runtime in
            try await checkFeedOption(options, runtime, usage: usage)
            let store = runtime.store
            // The id as given first: post ids may themselves hold a "/".
            var id = given
            var feeds = try await store.setRead(read, postID: PostID(id), inFeed: options["--feed"])
            if feeds.isEmpty, options["--feed"] == nil, let slash = given.firstIndex(of: "/") {
                id = String(given[given.index(after: slash)...])
                feeds = try await store.setRead(read, postID: PostID(id), inFeed: String(given[..<slash]))
            }
            return (feeds, id)
        }
        let shown = Terminal.safe(given, limit: 200)
        switch feeds.count {
        case 0:
            throw ServiceError(.notFound, "marking post \(shown) \(read ? "read" : "unread")",
                               "no stored post has that id\(options["--feed"].map { " in feed \(Terminal.safe($0, limit: 80))" } ?? ""); "
                               + "`feedsync posts` lists them as feed/id")
        case 1:
            try output.line("\(feeds[0])/\(Terminal.safe(id, limit: 200)) marked \(read ? "read" : "unread")")
            return .ok
        default:
            throw UsageError("feeds \(feeds.joined(separator: ", ")) each hold a post \(shown); choose one with --feed or write feed/id", usage: usage)
        }
    }
}

enum UnreadCommand: Command {
    static let words = ["unread"]
    static let summary = "Mark a post unread."
    static let synopsis = "unread ID [--config PATH] [--feed NAME]"
    static let options: [CommandLineOptions.Spec] = [.config, .feed]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        try await ReadCommand.mark(read: false, options, output: output, usage: usage)
    }
}
