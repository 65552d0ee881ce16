import App
import Core
import Foundation

/// `feedsync posts`: the newest posts from the local database.
enum PostsCommand: Command {
    static let words = ["posts"]
    static let summary = "List the newest stored posts."
    static let synopsis = "posts [--config PATH] [--feed NAME] [--limit N] [--unread] [--starred] [--json]"
    static let options: [CommandLineOptions.Spec] = [
        .config, .feed, .init("--limit", value: "N", "how many posts (default 20, at most 100000)"),
        .init("--unread", "only posts not marked read"), .init("--starred", "only starred posts"), .json,
    ]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("posts takes no arguments", usage: usage) }
        let limit = try options.int("--limit", in: 1...100_000, default: 20, usage: usage)
        let posts = try await withRuntime(options, localOnly) { runtime in
            try await checkFeedOption(options, runtime, usage: usage)
            return try await runtime.store.posts(matching: PostQuery(feed: options["--feed"], limit: limit, unreadOnly: options.has("--unread"),
                                                                        starredOnly: options.has("--starred")))
        }
        if options.has("--json") {
            try printJSON(to: output) { json in
                json.openArray()
                for stored in posts { PostRecord(stored).write(to: &json) }
                json.closeArray()
            }
            return .ok
        }
        for stored in posts {
            let post = stored.post
            let flags = [stored.isRead ? nil : "unread", stored.isStarred ? "starred" : nil, post.editedAt == nil ? nil : "edited",
                         post.videoIDs.isEmpty ? nil : "\(post.videoIDs.count) video",
                         post.repost.map { "shared by @\($0.by.handle)" }, post.contentWarning.map { "CW: \($0)" }].compactMap { $0 }
            // Text from servers is data: any control sequence in it is shown escaped, never run.
            let text = Terminal.safe(post.text.replacingOccurrences(of: "\n", with: " "), limit: 199)
            try output.line("\(stored.feed)/\(Terminal.safe(post.id.rawValue, limit: 200))  \(formatted(post.createdAt))  "
                  + "@\(Terminal.safe(post.author.handle, limit: 100))"
                  + (flags.isEmpty ? "" : "  [\(Terminal.safe(flags.joined(separator: ", "), limit: 300))]"))
            try output.line("    \(text)")
        }
        return .ok
    }
}
