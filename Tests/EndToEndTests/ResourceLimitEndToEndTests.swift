import Foundation
import Testing

/// A process out of file descriptors says so, naming the limit, whichever open failed first.
@Suite(.endToEnd) struct ResourceLimitEndToEndTests {
    @Test func runningOutOfDescriptorsIsReportedAsTheLimitWithHowToRaiseIt() async throws {
        let server = try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "2", "--items", "5"])
        let scratch = try Scratch()
        // One attempt per call, so a refused socket fails at once rather than after backoff.
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [{"name": "blog", "maxAttempts": 1, "#
            + #""posts": {"integration": "webfeed", "url": "\#(server.baseURL)/feeds/1.xml"}}]}"#
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: config)
        let binary = binaries.appendingPathComponent("feedsync").path

        var failures: [Int: String] = [:]
        var succeeded: [Int] = []
        var trapped: [Int] = []
        // From too few descriptors to read the config, through the store and its lock, to the
        // feed's socket, up to enough for all of it. Each run starts on a fresh store.
        for limit in 6...24 {
            for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: scratch.database.path + suffix) }
            let done = try await run(URL(fileURLWithPath: "/bin/sh"),
                                     ["-c", "ulimit -n \(limit) && exec \"$0\" pull --config \"$1\"", binary, config.path])
            if done.status == 0 {
                succeeded.append(limit)
            } else if done.status < 64 {
                // Killed by a signal: libdispatch's worker-pool monitor traps when it cannot
                // open /proc/self/task/…, which no code of ours reaches. Not a message to check.
                trapped.append(limit)
            } else {
                failures[limit] = done.stderr
                #expect(done.stderr.contains("too many open files (the process limit is \(limit); raise it with ulimit -n or LimitNOFILE=)"),
                        "ulimit -n \(limit): \(done.stderr)")
                #expect(!done.stderr.contains("unable to open database file") && !done.stderr.contains("refused"), "\(done.stderr)")
            }
        }
        #expect(failures.values.contains { $0.contains("opening the store") || $0.contains("opening the lock file") },
                 "some limit stops the store: \(failures)")
        #expect(failures.values.contains { $0.contains("reading the feed at") }, "some limit stops the feed's socket: \(failures)")
        #expect(succeeded.contains(24), "24 descriptors are enough for one feed (trapped: \(trapped))")
        #expect(trapped.count <= 3, "trapped at \(trapped)")
    }
}
