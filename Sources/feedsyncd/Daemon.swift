import App
import Core
import Foundation
import Sync

/// Syncs every configured feed once per its interval until SIGTERM or SIGINT.
struct Daemon {
    let runtime: Runtime

    /// Runs until a stop signal; a sync under way is cancelled, and its page transaction either
    /// commits or rolls back, so the store stays consistent.
    func run() async {
        let signals = SignalStream.watch([SIGTERM, SIGINT])
        await withTaskGroup(of: Void.self) { group in
            for feed in runtime.provider.feeds {
                group.addTask { await loop(feed.name, every: feed.interval) }
            }
            group.addTask {
                for await number in signals {
                    Log.info("stopping", ["signal": number == SIGTERM ? "SIGTERM" : "SIGINT"])
                    return
                }
            }
            // The first task to finish is the signal watcher: stop the feeds.
            await group.next()
            group.cancelAll()
        }
    }

    private func loop(_ feed: String, every interval: TimeInterval) async {
        while !Task.isCancelled {
            do {
                let report = try await runtime.engine(forFeed: feed).run()
                Log.info("sync_done", ["feed": feed, "new": "\(report.newPosts)", "updated": "\(report.updatedPosts)",
                                       "deleted": "\(report.deletedPosts)", "skipped": "\(report.skippedItems)",
                                       "pages": "\(report.pages)", "requests": "\(report.requests)",
                                       "ms": "\(Int(report.seconds * 1000))"])
            } catch is CancellationError {
                return
            } catch {
                Log.error("sync_failed", ["feed": feed, "error": describe(error)])
            }
            do { try await Task.sleep(for: .seconds(interval)) } catch { return }
        }
    }
}

/// One sentence for an error, as in the CLI.
func describe(_ error: any Error) -> String {
    switch error {
    case let error as ConfigError: return error.description
    case let error as ServiceError: return error.description
    case let error as UsageError: return error.message
    default: return "internal error: \(error.localizedDescription)"
    }
}
