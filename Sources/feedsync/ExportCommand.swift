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

    /// Pages read and not yet handed to the writing: the reading runs this far ahead.
    static let readAhead = 4

    /// Writes every post of `feeds` in three stages that overlap: the store reads page after
    /// page on its own (SQLite copying its rows on the store's thread; each page starts where
    /// the last ended, so the reading is one chain, the export's longest) up to ``readAhead``
    /// pages ahead, while up to ``encoders`` pages are encoded and the one before is written
    /// out. Each stage holds a few pages at a time, so memory stays flat; the bytes are the
    /// same, in the same order, as one stage after another.
    private static func write(_ feeds: [String], from store: any FeedStore, since: Date?, csv: Bool, to output: CheckedOutput) async throws {
        let gate = ExportReadAhead(pages: readAhead)
        let (pages, delivery) = AsyncThrowingStream.makeStream(of: ExportPage.self, throwing: (any Error).self)
        // The reading does not wait for the encoding or writing of earlier pages, only for room.
        let reading = Task {
            do {
                for feed in feeds {
                    var after: StoredPost.Position?
                    repeat {
                        guard await gate.enter() else { return delivery.finish(throwing: CancellationError()) }
                        let page = try await ExportPage.read(store, feed: feed, since: since, after: after, limit: batch)
                        delivery.yield(page)
                        after = page.count == batch ? page.lastPosition : nil
                    } while after != nil
                }
                delivery.finish()
            } catch {
                delivery.finish(throwing: error)
            }
        }
        var encoding: [Task<[UInt8], any Error>] = []
        var writing: Task<Void, any Error>?
        do {
            if csv {
                var header: [UInt8] = []
                PostRecord.appendCSVHeader(to: &header)
                try output.write(header)
            }
            for try await page in pages {
                encoding.append(Task { try page.encoded(csv: csv) })
                guard encoding.count >= encoders else { continue }
                let bytes = try await encoding.removeFirst().value
                try await writing?.value
                writing = Task { try output.write(bytes) }
                await gate.leave()
            }
            while !encoding.isEmpty {
                let bytes = try await encoding.removeFirst().value
                try await writing?.value
                writing = Task { try output.write(bytes) }
            }
            try await writing?.value
        } catch {
            // Nothing is left running on the output the caller is about to abandon, nor reading.
            reading.cancel()
            await gate.close()
            for task in encoding { task.cancel() }
            _ = try? await writing?.value
            _ = await reading.result
            throw error
        }
    }
}
