import App
import Core
import Foundation

/// `feedsync search QUERY`: the stored posts that best match a full-text query.
enum SearchCommand: Command {
    static let words = ["search"]
    static let summary = "Search stored posts (full text, best matches first)."
    static let synopsis = "search QUERY [--config PATH] [--feed NAME] [--limit N] [--since DATE] [--json]"
    static let options: [CommandLineOptions.Spec] = [
        .config, .feed, .init("--limit", value: "N", "how many matches (default 20, at most 10000)"), .since, .json,
    ]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 1, let text = options.positionals.first,
              !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw UsageError("give one search query; quote it when it has spaces: feedsync search \"sourdough bread\"", usage: usage)
        }
        let limit = try options.int("--limit", in: 1...10_000, default: 20, usage: usage)
        let since = try options.date("--since", usage: usage)
        let hits: [SearchHit]
        do {
            hits = try await withRuntime(options, localOnly) { runtime in
                try await checkFeedOption(options, runtime, usage: usage)
                return try await runtime.store.search(SearchQuery(text: text, feed: options["--feed"], since: since, limit: limit))
            }
        } catch let error as ServiceError where error.code == .invalidRequest {
            throw UsageError(error.reason, usage: usage)
        }
        if options.has("--json") {
            // A match: the post, its rank, and the matching stretch with terms in `**`.
            try printJSON(to: output) { json in
                json.openArray()
                for hit in hits {
                    json.openObject()
                    json.key("post")
                    PostRecord(hit.stored).write(to: &json)
                    json.double("rank", hit.rank)
                    json.string("snippet", marked(hit.snippet, on: "**", off: "**"))
                    json.closeObject()
                }
                json.closeArray()
            }
            return .ok
        }
        let bold = isatty(STDOUT_FILENO) == 1
        for hit in hits {
            let post = hit.stored.post
            try output.line("\(hit.stored.feed)/\(Terminal.safe(post.id.rawValue, limit: 200))  \(formatted(post.createdAt))  "
                  + "@\(Terminal.safe(post.author.handle, limit: 100)) (\(Terminal.safe(post.author.displayName, limit: 100)))")
            let snippet = Terminal.safe(hit.snippet.replacingOccurrences(of: "\n", with: " "), limit: 400)
            try output.line("    " + marked(snippet, on: bold ? "\u{1B}[1m" : "**", off: bold ? "\u{1B}[22m" : "**"))
        }
        if hits.isEmpty { printError("feedsync: no stored post matches \(Terminal.safe(text, limit: 200))") }
        return .ok
    }

    /// The snippet with the store's match markers (U+E000, U+E001) replaced. Markers are put in
    /// after the text is made safe, so only feedsync's own escape sequences reach a terminal.
    static func marked(_ snippet: String, on: String, off: String) -> String {
        snippet.replacingOccurrences(of: "\u{E000}", with: on).replacingOccurrences(of: "\u{E001}", with: off)
    }
}
