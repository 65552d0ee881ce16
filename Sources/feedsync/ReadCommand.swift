import App
import Core

/// `feedsync read ID` and `feedsync unread ID`: local read marks that no sync changes.
enum ReadCommand: Command {
    static let words = ["read"]
    static let summary = "Mark a post read."
    static let synopsis = "read ID [--config PATH] [--feed NAME]"
    static let options: [CommandLineOptions.Spec] = [.config, .feed]

    static func run(_ options: CommandLineOptions) async throws -> ExitStatus {
        try await mark(read: true, options, usage: usage)
    }

    static func mark(read: Bool, _ options: CommandLineOptions, usage: String) async throws -> ExitStatus {
        guard options.positionals.count == 1, let id = options.positionals.first else {
            throw UsageError("give exactly one post ID", usage: usage)
        }
        let feeds = try await withRuntime(options) { runtime in
            try await runtime.store.setRead(read, postID: PostID(id), inFeed: options["--feed"])
        }
        switch feeds.count {
        case 0:
            throw UsageError("no stored post has the id \(id)\(options["--feed"].map { " in feed \($0)" } ?? "")", usage: usage)
        case 1:
            print("\(feeds[0])/\(id) marked \(read ? "read" : "unread")")
            return .ok
        default:
            throw UsageError("feeds \(feeds.joined(separator: ", ")) each hold a post \(id); choose one with --feed", usage: usage)
        }
    }
}

enum UnreadCommand: Command {
    static let words = ["unread"]
    static let summary = "Mark a post unread."
    static let synopsis = "unread ID [--config PATH] [--feed NAME]"
    static let options: [CommandLineOptions.Spec] = [.config, .feed]

    static func run(_ options: CommandLineOptions) async throws -> ExitStatus {
        try await ReadCommand.mark(read: false, options, usage: usage)
    }
}
