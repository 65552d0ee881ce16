import App
import Core
import Foundation

/// `feedsync export`: streams stored posts, with their authors and resolved videos, as JSON
/// Lines or CSV, in a stable order (feed by feed, newest first), in flat memory.
enum ExportCommand: Command {
    static let words = ["export"]
    static let summary = "Write stored posts as JSON Lines or CSV."
    static let synopsis = "export [--config PATH] [--feed NAME] [--since DATE] [--format jsonl|csv] [--output FILE]"
    static let options: [CommandLineOptions.Spec] = [
        .config, .feed, .since,
        .init("--format", value: "FORMAT", "jsonl (one JSON object per line, the default) or csv"),
        .init("--output", value: "FILE", "write to FILE (replaced once complete), a FIFO or device (streamed), or - for standard output"),
    ]

    /// Posts read from the store at a time: memory stays flat however many there are.
    static let batch = 2_000

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("export takes no arguments", usage: usage) }
        let format = options["--format"] ?? "jsonl"
        guard ["jsonl", "csv"].contains(format) else {
            throw UsageError("--format takes jsonl or csv, not \"\(Terminal.safe(format, limit: 40))\"", usage: usage)
        }
        let since = try options.date("--since", usage: usage)
        return try await withRuntime(options, localOnly) { runtime in
            try await checkFeedOption(options, runtime, usage: usage)
            let target = try ExportTarget.open(options["--output"], standardOutput: output, storeFiles: runtime.storeFiles, usage: usage)
            do {
                var bytes: [UInt8] = []
                if format == "csv" { PostRecord.appendCSVHeader(to: &bytes) }
                var json = JSONWriter(escaping: .terminalControls)
                let feeds: [String]
                if let feed = options["--feed"] { feeds = [feed] } else { feeds = try await runtime.store.feedNames() }
                for feed in feeds {
                    var after: StoredPost.Position?
                    repeat {
                        let page = try await runtime.store.posts(matching: PostQuery(feed: feed, limit: batch, since: since,
                                                                                      stable: true, after: after))
                        for stored in page {
                            if format == "csv" {
                                PostRecord(stored).appendCSVRow(to: &bytes)
                            } else {
                                PostRecord(stored).write(to: &json)
                                json.newline()
                            }
                        }
                        try target.output.write(bytes)
                        try target.output.write(json.bytes)
                        bytes.removeAll(keepingCapacity: true)
                        json.bytes.removeAll(keepingCapacity: true)
                        after = page.count == batch ? page.last?.position : nil
                    } while after != nil
                }
                try target.commit()
            } catch {
                target.abandon()
                throw error
            }
            return .ok
        }
    }
}
