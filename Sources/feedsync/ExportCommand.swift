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
                let feeds: [String]
                if let feed = options["--feed"] { feeds = [feed] } else { feeds = try await runtime.store.feedNames() }
                try await write(feeds, from: runtime.store, since: since, csv: format == "csv", to: target.output)
                try target.commit()
            } catch {
                target.abandon()
                throw error
            }
            return .ok
        }
    }

    /// Pages encoded at once: two, so that on a busy machine the reading, the encoding and the
    /// writing each have a thread of their own to be scheduled on.
    static let encoders = 2

    /// Writes every post of `feeds` in three stages that overlap: the store reads the next page
    /// (SQLite copying its rows on the store's thread) while up to ``encoders`` pages are
    /// encoded and the one before is written out. Each stage holds a page or two at a time, so
    /// memory stays flat; the bytes are the same, in the same order, as one stage after another.
    private static func write(_ feeds: [String], from store: any FeedStore, since: Date?, csv: Bool, to output: CheckedOutput) async throws {
        var reading: Task<ExportPage, any Error>?
        var encoding: [Task<[UInt8], any Error>] = []
        var writing: Task<Void, any Error>?
        let read = { @Sendable (feed: String, after: StoredPost.Position?) in
            Task { try await ExportPage.read(store, feed: feed, since: since, after: after, limit: batch) }
        }
        do {
            if csv {
                var header: [UInt8] = []
                PostRecord.appendCSVHeader(to: &header)
                try output.write(header)
            }
            for feed in feeds {
                reading = read(feed, nil)
                while let current = reading {
                    let page = try await current.value
                    reading = page.count == batch ? page.lastPosition.map { read(feed, $0) } : nil
                    encoding.append(Task { try page.encoded(csv: csv) })
                    guard encoding.count >= encoders else { continue }
                    let bytes = try await encoding.removeFirst().value
                    try await writing?.value
                    writing = Task { try output.write(bytes) }
                }
            }
            while !encoding.isEmpty {
                let bytes = try await encoding.removeFirst().value
                try await writing?.value
                writing = Task { try output.write(bytes) }
            }
            try await writing?.value
        } catch {
            // Nothing is left running on the output the caller is about to abandon.
            reading?.cancel()
            for task in encoding { task.cancel() }
            _ = try? await writing?.value
            throw error
        }
    }
}
