import App
import Core
import Foundation
import Sync

/// Fetches what the stored posts point at into the media archive, when the config has
/// `"media"`: after syncing (it waits while a sync is under way), in slots of its own
/// (`media.concurrency`) and turns per host of its own, so it never holds a sync's slot or
/// permit. A shutdown cancels a pass; a download cut short resumes on the next pass. Without
/// `"media"` it waits for a reload, not a timer.
struct MediaService: Service {
    let scheduler: Scheduler
    let metrics: MetricsRegistry
    let log: Logger

    var name: String { "media" }
    /// It reads the store, which stays open until every user of it has stopped.
    var dependencies: [String] { ["runtime"] }

    func run(until shutdown: GracefulShutdown) async {
        let short = ProcessInfo.processInfo.environment["FEEDSYNC_TEST_SHORT_INTERVALS"] == "1"
        let pause: Duration = short ? .milliseconds(200) : .seconds(60)
        while !shutdown.isRequested {
            let (runtime, reloaded) = await scheduler.currentRuntimeUntilReload
            // Without "media" there is nothing to fetch until a reload brings it.
            guard runtime.media != nil else {
                if await shutdown.requested(orUntil: reloaded) { break }
                continue
            }
            if await scheduler.syncsUnderWay == 0 {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await pass(runtime) }
                    group.addTask { await shutdown.requested() }
                    await group.next()
                    group.cancelAll()
                }
            }
            if await shutdown.requested(within: pause) { break }
        }
    }

    /// One scan and fetch; what went wrong is logged, and the next pass tries again.
    private func pass(_ runtime: Runtime) async {
        do {
            guard let (archiver, fetcher) = try await runtime.mediaArchiver(log: log) else { return }
            defer { Task { await fetcher.close() } }
            _ = try await archiver.scan()
            let report = try await archiver.fetch()
            if report.fetched + report.failed + report.refused + report.skippedForRoom > 0 {
                log.info("media_fetched", ["fetched": "\(report.fetched)", "bytes": "\(report.bytes)", "failed": "\(report.failed)",
                                           "refused": "\(report.refused)", "skipped_for_room": "\(report.skippedForRoom)"])
            }
            metrics.updateMedia(try await runtime.store.mediaSummary())
        } catch is CancellationError {
            return
        } catch {
            log.error("media_failed", ["reason": Terminal.safe("\(error)", limit: 1_000)])
        }
    }
}
