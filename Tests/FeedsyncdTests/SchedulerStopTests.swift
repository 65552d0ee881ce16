import App
import Core
@testable import feedsyncd
import Foundation
import Testing

/// What the scheduler's stop leaves in a store that other daemons may share.
@Suite struct SchedulerStopTests {
    @Test func stoppingClearsOnlyTheSchedulesThisDaemonWrote() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsyncd-stop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Port 9 (discard) refuses on loopback: "mine" fails at once and this daemon schedules its retry.
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "mine", "maxAttempts": 1, "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/a.xml"}},
                       {"name": "theirs", "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/b.xml"}}]}
            """
        let config = folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: config)
        let runtime = try Runtime.load(configPath: config.path)
        try await runtime.start()
        // Another daemon sharing the store has scheduled "theirs" an hour from now.
        let theirs = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3600).rounded())
        try await runtime.store.setNextAttempt(theirs, ofFeed: "theirs")
        var log = Logger()
        log.minimum = .error
        let scheduler = Scheduler(runtime: runtime, log: log)

        await scheduler.start()
        // Both feeds have had their turn: "mine" failed and was rescheduled here; "theirs" was not due.
        var settled = false
        let deadline = ContinuousClock.now + .seconds(600)
        while !settled && ContinuousClock.now < deadline {
            let mine = try await runtime.store.feedStatuses().first { $0.feed == "mine" }?.nextAttemptAt
            let theirsNext = await scheduler.nextRun(of: "theirs")
            settled = mine != nil && (theirsNext.map { $0.timeIntervalSinceNow > 60 } ?? false)
            if !settled { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(settled)
        await scheduler.stop()

        let statuses = try await runtime.store.feedStatuses()
        #expect(statuses.first { $0.feed == "mine" }?.nextAttemptAt == nil, "this daemon's own schedule goes with it")
        #expect(statuses.first { $0.feed == "theirs" }?.nextAttemptAt == theirs, "another daemon's schedule stays")
        await scheduler.close()
    }
}
