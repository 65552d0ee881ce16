import App
import Core
import Foundation
import Sync

/// What the media archive holds, as `media status --json` and `status --json` print it.
struct MediaReport: Encodable {
    var folder: String
    var maxBytes: Int64?
    /// Distinct files and their bytes (the same bytes under two addresses are one file).
    var files: Int
    var bytes: Int64
    var fetched: Int
    var pending: Int
    var failed: Int
    var refused: Int
    /// Not fetched, or removed, to keep the archive under `maxBytes`.
    var skippedForRoom: Int

    init(_ summary: MediaSummary, _ media: Config.Media) {
        folder = media.folder.path
        maxBytes = media.maxBytes
        files = summary.files
        bytes = summary.bytes
        fetched = summary.count(.fetched)
        pending = summary.count(.pending)
        failed = summary.count(.failed)
        refused = summary.count(.refused)
        skippedForRoom = summary.skippedForRoom
    }

    /// `media: 12 files, 3456789 bytes of 20000000000; 2 pending, 1 failed, 1 refused, 0 skipped for room`.
    var line: String {
        "media: \(files) file\(files == 1 ? "" : "s"), \(bytes) bytes" + (maxBytes.map { " of \($0)" } ?? "")
            + "; \(pending) pending, \(failed) failed, \(refused) refused, \(skippedForRoom) skipped for room"
    }

    /// The report of `runtime`'s archive; `nil` when the config has no `"media"`.
    static func of(_ runtime: Runtime) async throws -> MediaReport? {
        guard let media = runtime.media else { return nil }
        return MediaReport(try await runtime.store.mediaSummary(), media)
    }
}

/// `feedsync media status`: the archive's counts and bytes.
enum MediaStatusCommand: Command {
    static let words = ["media", "status"]
    static let summary = "Show what the media archive holds: files, bytes, and what is pending, failed, refused or skipped for room."
    static let synopsis = "media status [--config PATH] [--json]"
    static let options: [CommandLineOptions.Spec] = [.config, .json]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("media status takes no arguments", usage: usage) }
        let report = try await withRuntime(options, localOnly) { runtime in
            guard let report = try await MediaReport.of(runtime) else { throw MediaCommands.off(runtime) }
            return report
        }
        if options.has("--json") { try printJSON(to: output, report) } else { try output.line(report.line) }
        return .ok
    }
}

/// `feedsync media fetch`: fetches what the stored posts point at (for cron users; feedsyncd
/// does it after syncing).
enum MediaFetchCommand: Command {
    static let words = ["media", "fetch"]
    static let summary = "Fetch the media the stored posts point at into the archive (feedsyncd does this after syncing)."
    static let synopsis = "media fetch [--config PATH] [--retry-skipped]"
    static let options: [CommandLineOptions.Spec] = [
        .config, .init("--retry-skipped", "also try again what was skipped for room"),
    ]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("media fetch takes no arguments", usage: usage) }
        let log = Logger { printError("feedsync: \(Terminal.safe($0, limit: 1_000))") }
        return try await withRuntime(options, localOnly) { runtime in
            guard let (archiver, fetcher) = try await runtime.mediaArchiver(log: log) else { throw MediaCommands.off(runtime) }
            let references = try await archiver.scan()
            let report: MediaArchiver.Report
            do {
                report = try await archiver.fetch(includingSkipped: options.has("--retry-skipped")) { done, total in
                    MediaCommands.showProgress(done, total)
                }
            } catch {
                await fetcher.close()
                throw error
            }
            await fetcher.close()
            MediaCommands.clearProgress()
            try output.line("media: read \(references) references; fetched \(report.fetched) (\(report.bytes) bytes), \(report.failed) failed, "
                            + "\(report.refused) refused, \(report.skippedForRoom) skipped for room")
            return .ok
        }
    }
}

/// `feedsync media prune`: removes what no stored post refers to any more.
enum MediaPruneCommand: Command {
    static let words = ["media", "prune"]
    static let summary = "Remove the archived media no stored post refers to any more (posts removed by \"keep\", feeds purged)."
    static let synopsis = "media prune [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("media prune takes no arguments", usage: usage) }
        let log = Logger { printError("feedsync: \(Terminal.safe($0, limit: 1_000))") }
        return try await withRuntime(options, localOnly) { runtime in
            guard let (archiver, fetcher) = try await runtime.mediaArchiver(log: log) else { throw MediaCommands.off(runtime) }
            let pruned = try await archiver.prune()
            await fetcher.close()
            try output.line("media: removed \(pruned.rows) unreferenced address\(pruned.rows == 1 ? "" : "es") "
                            + "and \(pruned.files) file\(pruned.files == 1 ? "" : "s") (\(pruned.bytes) bytes)")
            return .ok
        }
    }
}

/// What the `media` commands share.
enum MediaCommands {
    private static let isTerminal = isatty(STDERR_FILENO) == 1

    /// The archive is off: the config has no `"media"`.
    static func off(_ runtime: Runtime) -> ConfigError {
        ConfigError(file: runtime.configName, keyPath: "media",
                    message: "is not set, so there is no media archive; add \"media\": {\"path\": \"media\"} (see docs/media.md)")
    }

    /// `312 of 1000 media` on a terminal only.
    static func showProgress(_ done: Int, _ total: Int) {
        guard isTerminal else { return }
        writeStandardError("\r\u{1B}[Kmedia: \(done) of \(total)")
    }

    static func clearProgress() {
        if isTerminal { writeStandardError("\r\u{1B}[K") }
    }
}
