import App
import Core
import Foundation
import Sync
import Synchronization

/// `feedsync pull`: syncs every feed (or one) once and prints what changed.
enum PullCommand: Command {
    static let words = ["pull"]
    static let summary = "Sync the configured feeds into the local database once."
    static let synopsis = "pull [--config PATH] [--feed NAME] [--full [--force-delete]] [--wait SECONDS] [--json]"
    static let options: [CommandLineOptions.Spec] = [
        .config, .feed, .init("--full", "walk the whole feed from the beginning instead of from the stored cursor"),
        .init("--force-delete", "with --full: delete every post the server no longer has, even most of the feed"),
        .init("--wait", value: "SECONDS", "how long to wait for another process (feedsyncd) to let go of the store, or on PostgreSQL of the feed (default 30)"),
        .json,
    ]

    /// One feed's outcome as `--json` prints it.
    struct Outcome: Encodable, Sendable {
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

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
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
            guard !runtime.feedNames.isEmpty else {
                // Not a failure: a config whose last feed was removed or logged out of.
                if json { try printJSON(to: output, [Outcome]()) } else { try output.line(Self.noFeeds(runtime.configName)) }
                return .ok
            }
            let full = options.has("--full")
            // Feeds sync `daemon.concurrency` at a time (the runtime's sync slots), as in the
            // daemon; the shared transports and host gate keep `maxRequestsPerHost`. A feed that
            // waits out a quota hands its slot to a feed queued behind it, so more feeds are
            // under way than there are slots: up to eight per slot may wait at once without
            // idling one, and the queue stays small for thousands of feeds. One feed alone
            // streams its lines and its progress as before; several hold theirs back to print
            // them in config order.
            let width = feeds.count > 1 ? min(feeds.count, max(32, runtime.daemon.concurrency * 8)) : 1
            let tally = width > 1 ? Tally(feeds: feeds.count) : nil
            let engineOptions = engineOptions
            let results = await inOrder(feeds.indices, width: width, run: { index in
                await sync(feeds[index], runtime: runtime, options: engineOptions, full: full, tally: tally)
            }, then: { result in
                clearProgress()
                for line in result.errorLines { printError(line) }
                // A summary that cannot be written does not stop the syncs; the failure sticks to
                // `output`, and closing it at the end makes the exit 74.
                if let summary = result.summary, !json { try? output.line(summary); try? output.flush() }
                tally?.show()
            })
            if json { try printJSON(to: output, results.map(\.outcome)) }
            // As before: the status of the first feed (in config order) that failed.
            return results.first { $0.status != .ok }?.status ?? .ok
        }
    }

    /// What `pull` says of a config that lists no feeds, in one line.
    static func noFeeds(_ configName: String) -> String {
        "\(Terminal.safe(configName, limit: 300)) lists no feeds, so there is nothing to pull; `feedsync add` or `feedsync login` adds one"
    }

    /// One feed's sync as it prints: its standard error lines, then its summary line.
    struct FeedResult: Sendable {
        var errorLines: [String] = []
        var summary: String?
        var outcome: Outcome
        var status = ExitStatus.ok
    }

    /// Syncs one feed. With a `tally` (several feeds at once) its lines are held back, and the
    /// terminal shows the tally instead of the feed's own progress line.
    static func sync(_ feed: String, runtime: Runtime, options: SyncEngine.Options, full: Bool, tally: Tally?) async -> FeedResult {
        let held = Locked<[String]>([])
        let report: @Sendable (String) -> Void = { line in
            if tally == nil { clearProgress(); printError(line) } else { held.withLock { $0.append(line) } }
        }
        var result: FeedResult
        do {
            let engine = try runtime.engine(forFeed: feed, options: options)
            let progress = progress(feed, tally: tally, report: report)
            let sync = try await runtime.slots.run(feed: feed) { try await engine.run(full: full, progress: progress) }
            result = FeedResult(summary: summary(sync), outcome: Outcome(sync))
            if let holder = sync.tookOverLeaseFrom {
                report("feedsync: took over the store lock left behind by \(holder), which no longer held it")
            }
        } catch {
            report("feedsync: \(feed): \(describe(error))")
            result = FeedResult(outcome: Outcome(feed: feed, error: error), status: ExitStatus(for: error))
        }
        tally?.feedDone()
        result.errorLines = held.withLock { $0 }
        return result
    }

    /// Runs `run` for every index, at most `width` at once, and hands each result to `then` in
    /// index order as soon as every earlier one is in: what prints is the same however the runs
    /// interleave.
    static func inOrder<T: Sendable>(_ indices: Range<Int>, width: Int, run: @escaping @Sendable (Int) async -> T,
                                     then: (T) -> Void) async -> [T] {
        await withTaskGroup(of: (Int, T).self) { group in
            var next = indices.lowerBound
            var done: [Int: T] = [:]
            var results: [T] = []
            results.reserveCapacity(indices.count)
            while next < indices.upperBound && next - indices.lowerBound < max(1, width) {
                let index = next
                group.addTask { (index, await run(index)) }
                next += 1
            }
            while let (index, result) = await group.next() {
                done[index] = result
                if next < indices.upperBound {
                    let index = next
                    group.addTask { (index, await run(index)) }
                    next += 1
                }
                while let ready = done.removeValue(forKey: indices.lowerBound + results.count) {
                    then(ready)
                    results.append(ready)
                }
            }
            return results
        }
    }

    static func summary(_ report: SyncReport) -> String {
        var videos = "\(report.videosResolved) videos resolved"
        if report.videosUnresolved > 0 { videos += " (\(report.videosUnresolved) unresolved)" }
        return "\(report.feed): \(report.newPosts) new, \(report.updatedPosts) updated, \(report.deletedPosts) deleted, "
            + "\(report.skippedItems) skipped, \(report.filteredPosts > 0 ? "\(report.filteredPosts) filtered, " : "")\(report.prunedPosts > 0 ? "\(report.prunedPosts) pruned, " : "")\(videos); \(report.pages) page\(report.pages == 1 ? "" : "s"), \(report.requests) request\(report.requests == 1 ? "" : "s"), "
            + String(format: "%.2f s", report.seconds)
    }

    private static let isTerminal = isatty(STDERR_FILENO) == 1

    /// Reports skipped items always (through `report`), and a progress line when standard error
    /// is a terminal: the feed's pages, posts and rate so far, or with several feeds at once, the tally.
    static func progress(_ feed: String, tally: Tally?, report: @escaping @Sendable (String) -> Void) -> @Sendable (SyncEngine.Progress) -> Void {
        let started = Date()
        let counted = Locked(0)
        return { progress in
            for item in progress.skipped {
                report("feedsync: \(feed): skipped \(Terminal.safe(item.description, limit: 500))")
            }
            if let tally {
                let posts = progress.posts
                let added = counted.withLock { before in defer { before = posts }; return posts - before }
                tally.add(posts: added)
                tally.show()
            } else if isTerminal {
                let seconds = max(Date().timeIntervalSince(started), 0.001)
                let rate = Int(Double(progress.posts) / seconds)
                writeStandardError("\r\u{1B}[K\(feed): \(progress.pages) pages, \(progress.posts) posts, \(rate) posts/s")
            }
        }
    }

    /// A value that closures running at once share.
    final class Locked<Value: Sendable>: Sendable {
        private let mutex: Mutex<Value>
        init(_ value: Value) { mutex = Mutex(value) }
        func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { mutex.withLock { value -> T in body(&value) } }
    }

    /// Feeds done and posts written across feeds that sync at once, for one progress line.
    final class Tally: Sendable {
        private let counts = Mutex((feeds: 0, posts: 0))
        private let total: Int
        private let started = Date()

        init(feeds: Int) { total = feeds }

        func add(posts: Int) { counts.withLock { $0.posts += posts } }
        func feedDone() { counts.withLock { $0.feeds += 1 } }

        /// Rewrites the progress line on a terminal: `312 of 1000 feeds, 15600 posts, 4210 posts/s`.
        func show() {
            guard isTerminal else { return }
            let (feeds, posts) = counts.withLock { ($0.feeds, $0.posts) }
            let rate = Int(Double(posts) / max(Date().timeIntervalSince(started), 0.001))
            writeStandardError("\r\u{1B}[K\(feeds) of \(total) feeds, \(posts) posts, \(rate) posts/s")
        }
    }

    static func clearProgress() {
        if isTerminal { writeStandardError("\r\u{1B}[K") }
    }
}
