import App
import Core

/// `feedsync read ID` and `feedsync unread ID`: local read marks that no sync changes.
/// `star` and `unstar` (``StarCommand``) set the other local mark the same way.
enum ReadCommand: Command {
    static let words = ["read"]
    static let summary = "Mark a post read."
    static let synopsis = "read ID [--config PATH] [--feed NAME]"
    static let options: [CommandLineOptions.Spec] = [.config, .feed]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        try await mark(.read, options, output: output, usage: usage)
    }

    /// A local mark a person sets on a post, and how the command names it.
    enum Mark {
        case read, unread, star, unstar

        /// What the line after the post says: `marked read`, `starred`.
        var done: String {
            switch self {
            case .read: "marked read"
            case .unread: "marked unread"
            case .star: "starred"
            case .unstar: "unstarred"
            }
        }

        /// What was being done, for an error: `marking post X read`, `starring post X`.
        func doing(_ post: String) -> String {
            switch self {
            case .read: "marking post \(post) read"
            case .unread: "marking post \(post) unread"
            case .star: "starring post \(post)"
            case .unstar: "unstarring post \(post)"
            }
        }

        func set(_ postID: PostID, inFeed feed: String?, on store: any FeedStore) async throws -> [String] {
            switch self {
            case .read, .unread: try await store.setRead(self == .read, postID: postID, inFeed: feed)
            case .star, .unstar: try await store.setStarred(self == .star, postID: postID, inFeed: feed)
            }
        }
    }

    /// Marks the post `ID` names: an id as `posts` prints it (`feed/id`), or a bare id,
    /// with `--feed` when several feeds hold it.
    static func mark(_ mark: Mark, _ options: CommandLineOptions, output: CheckedOutput, usage: String) async throws -> ExitStatus {
        guard options.positionals.count == 1, let given = options.positionals.first, !given.isEmpty else {
            throw UsageError("give exactly one post ID", usage: usage)
        }
        let (feeds, id) = try await withRuntime(options, localOnly) { runtime in
            try await checkFeedOption(options, runtime, usage: usage)
            let store = runtime.store
            // The id as given first: post ids may themselves hold a "/".
            var id = given
            var feeds = try await mark.set(PostID(id), inFeed: options["--feed"], on: store)
            if feeds.isEmpty, options["--feed"] == nil, let slash = given.firstIndex(of: "/") {
                id = String(given[given.index(after: slash)...])
                feeds = try await mark.set(PostID(id), inFeed: String(given[..<slash]), on: store)
            }
            return (feeds, id)
        }
        let shown = Terminal.safe(given, limit: 200)
        switch feeds.count {
        case 0:
            throw ServiceError(.notFound, mark.doing(shown),
                               "no stored post has that id\(options["--feed"].map { " in feed \(Terminal.safe($0, limit: 80))" } ?? ""); "
                               + "`feedsync posts` lists them as feed/id")
        case 1:
            try output.line("\(feeds[0])/\(Terminal.safe(id, limit: 200)) \(mark.done)")
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
        try await ReadCommand.mark(.unread, options, output: output, usage: usage)
    }
}
