import App
import Core
import Foundation
import Sync

/// `feedsync pull`: syncs every feed (or one) once and prints what changed.
enum PullCommand: Command {
    static let words = ["pull"]
    static let summary = "Sync the configured feeds into the local database once."
    static let synopsis = "pull [--config PATH] [--feed NAME] [--full [--force-delete]] [--wait SECONDS] [--json]"
    static let options: [CommandLineOptions.Spec] = [
        .config, .feed, .init("--full", "walk the whole feed from the beginning instead of from the stored cursor"),
        .init("--force-delete", "with --full: delete every post the server no longer has, even most of the feed"),
        .init("--wait", value: "SECONDS", "how long to wait for another process (feedsyncd) to let go of the store (default 30)"),
        .json,
    ]

    /// One feed's outcome as `--json` prints it.
    struct Outcome: Encodable {
        var feed: String
        var new, updated, deleted, skipped, videosResolved, videosUnresolved, pages, requests: Int
        var seconds: Double
        /// The error's sentence and exit status, for a feed that failed.
        var error: String?
        var exitStatus: Int32

        init(_ report: SyncReport) {
            feed = report.feed
            new = report.newPosts
            updated = report.updatedPosts
            deleted = report.deletedPosts
            skipped = report.skippedItems
            videosResolved = report.videosResolved
            videosUnresolved = report.videosUnresolved
            pages = report.pages
            requests = report.requests
            seconds = (report.seconds * 1000).rounded() / 1000
            exitStatus = 0
        }

        init(feed: String, error: any Error) {
            self.init(SyncReport(feed: feed))
            self.error = describe(error)
            exitStatus = ExitStatus(for: error).rawValue
        }
    }

    static func run(_ options: CommandLineOptions) async throws -> ExitStatus {
        guard options.positionals.isEmpty else { throw UsageError("pull takes no arguments", usage: usage) }
        var engineOptions = SyncEngine.Options()
        engineOptions.lockWait = TimeInterval(try options.int("--wait", in: 0...86_400, default: 30, usage: usage))
        engineOptions.lockHolder = "feedsync pull"
        engineOptions.forceDelete = options.has("--force-delete")
        if engineOptions.forceDelete && !options.has("--full") {
            throw UsageError("--force-delete goes with --full", usage: usage)
        }
        var load = Runtime.Options(feeds: options["--feed"].map { .named([$0]) } ?? .all)
        load.notice = { sentence in
            clearProgress()
            printError("feedsync: \(Terminal.safe(sentence, limit: 1_000))")
        }
        return try await withRuntime(options, load) { runtime in
            if let name = options["--feed"], !runtime.feedNames.contains(name) {
                throw UsageError("--feed \(Terminal.safe(name, limit: 80)): the config \(Runtime.noSuchFeed(name, among: runtime.feedNames))", usage: usage)
            }
            let feeds = runtime.builtFeedNames
            let json = options.has("--json")
            var status = ExitStatus.ok
            var outcomes: [Outcome] = []
            for feed in feeds {
                do {
                    let report = try await runtime.engine(forFeed: feed, options: engineOptions)
                        .run(full: options.has("--full"), progress: progress(feed))
                    clearProgress()
                    if let holder = report.tookOverLeaseFrom {
                        printError("feedsync: took over the store lock left behind by \(holder), which no longer held it")
                    }
                    if json { outcomes.append(Outcome(report)) } else { print(summary(report)) }
                } catch {
                    clearProgress()
                    printError("feedsync: \(feed): \(describe(error))")
                    outcomes.append(Outcome(feed: feed, error: error))
                    if status == .ok { status = ExitStatus(for: error) }
                }
            }
            if json { try printJSON(outcomes) }
            return status
        }
    }

    static func summary(_ report: SyncReport) -> String {
        var videos = "\(report.videosResolved) videos resolved"
        if report.videosUnresolved > 0 { videos += " (\(report.videosUnresolved) unresolved)" }
        return "\(report.feed): \(report.newPosts) new, \(report.updatedPosts) updated, \(report.deletedPosts) deleted, "
            + "\(report.skippedItems) skipped, \(videos); \(report.pages) page\(report.pages == 1 ? "" : "s"), \(report.requests) request\(report.requests == 1 ? "" : "s"), "
            + String(format: "%.2f s", report.seconds)
    }

    private static let isTerminal = isatty(STDERR_FILENO) == 1

    /// Reports skipped items always, and a progress line when standard error is a terminal:
    /// pages, posts and the rate so far.
    static func progress(_ feed: String) -> @Sendable (SyncEngine.Progress) -> Void {
        let started = Date()
        return { progress in
            for item in progress.skipped {
                clearProgress()
                printError("feedsync: \(feed): skipped \(Terminal.safe(item.description, limit: 500))")
            }
            if isTerminal {
                let seconds = max(Date().timeIntervalSince(started), 0.001)
                let rate = Int(Double(progress.posts) / seconds)
                FileHandle.standardError.write(Data("\r\u{1B}[K\(feed): \(progress.pages) pages, \(progress.posts) posts, \(rate) posts/s".utf8))
            }
        }
    }

    static func clearProgress() {
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
