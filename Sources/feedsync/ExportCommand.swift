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
        .init("--output", value: "FILE", "write to FILE instead of standard output (replaced when complete)"),
    ]

    /// Posts read from the store at a time: memory stays flat however many there are.
    static let batch = 500

    static func run(_ options: CommandLineOptions) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("export takes no arguments", usage: usage) }
        let format = options["--format"] ?? "jsonl"
        guard ["jsonl", "csv"].contains(format) else {
            throw UsageError("--format takes jsonl or csv, not \"\(Terminal.safe(format, limit: 40))\"", usage: usage)
        }
        let since = try options.date("--since", usage: usage)
        return try await withRuntime(options, localOnly) { runtime in
            try await checkFeedOption(options, runtime, usage: usage)
            let output = try ExportOutput(path: options["--output"])
            do {
                let writer = RecordWriter(format: format, output: output)
                try writer.begin()
                let feeds: [String]
                if let feed = options["--feed"] { feeds = [feed] } else { feeds = try await runtime.store.feedNames() }
                for feed in feeds {
                    var after: StoredPost.Position?
                    repeat {
                        let page = try await runtime.store.posts(matching: PostQuery(feed: feed, limit: batch, since: since,
                                                                                      stable: true, after: after))
                        for stored in page { try writer.write(PostRecord(stored)) }
                        after = page.count == batch ? page.last?.position : nil
                    } while after != nil
                }
                try output.finish()
            } catch {
                output.abandon()
                throw error
            }
            return .ok
        }
    }
}

/// Encodes records one at a time into JSON Lines or CSV.
struct RecordWriter {
    let format: String
    let output: ExportOutput
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    init(format: String, output: ExportOutput) {
        self.format = format
        self.output = output
    }

    /// The CSV columns: the post's own fields flattened, lists joined by spaces.
    static let csvColumns = ["feed", "id", "created_at", "edited_at", "author_id", "author_handle", "author_name", "text", "title",
                             "url", "reply_to", "replies", "reposts", "likes", "quotes", "repost_by", "repost_of", "video_ids",
                             "video_urls", "language", "content_warning", "read"]

    func begin() throws {
        if format == "csv" { try output.write(Self.csvColumns.map(Self.csvField).joined(separator: ",") + "\r\n") }
    }

    func write(_ record: PostRecord) throws {
        if format == "jsonl" {
            try output.write(String(decoding: try encoder.encode(record), as: UTF8.self) + "\n")
            return
        }
        let fields: [String?] = [
            record.feed, record.id, iso(record.createdAt), record.editedAt.map(iso), record.author.id, record.author.handle,
            record.author.displayName, record.text, record.title, record.url?.absoluteString, record.replyTo,
            String(record.counts.replies), String(record.counts.reposts), String(record.counts.likes), String(record.counts.quotes),
            record.repost?.by.handle, record.repost?.originalID, record.videoIDs.joined(separator: " "),
            record.videos.map(\.streamURL.absoluteString).joined(separator: " "), record.language, record.contentWarning,
            record.read ? "1" : "0",
        ]
        try output.write(fields.map { Self.csvField($0 ?? "") }.joined(separator: ",") + "\r\n")
    }

    private func iso(_ date: Date) -> String { date.formatted(.iso8601) }

    /// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
    static func csvField(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// Standard output, or a file that replaces `path` only once the export is complete.
final class ExportOutput {
    private let handle: FileHandle
    private let path: String?
    private let temporary: String?
    private var buffer = Data()

    init(path: String?) throws {
        self.path = path
        guard let path else {
            handle = .standardOutput
            temporary = nil
            return
        }
        let temporary = path + ".\(getpid()).partial"
        guard FileManager.default.createFile(atPath: temporary, contents: nil), let handle = FileHandle(forWritingAtPath: temporary) else {
            throw ServiceError(.storage, "writing the export to \(path)", "the file cannot be created")
        }
        self.handle = handle
        self.temporary = temporary
    }

    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    private func flush() throws {
        do { try handle.write(contentsOf: buffer) } catch {
            throw ServiceError(.storage, "writing the export\(path.map { " to \($0)" } ?? "")", error.localizedDescription)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func finish() throws {
        try flush()
        guard let path, let temporary else { return }
        try? handle.close()
        guard rename(temporary, path) == 0 else {
            throw ServiceError(.storage, "writing the export to \(path)", String(cString: strerror(errno)))
        }
    }

    func abandon() {
        guard let temporary else { return }
        try? handle.close()
        unlink(temporary)
    }
}
