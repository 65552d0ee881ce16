@testable import App
import Core
import Foundation
import Synchronization
import Testing

/// Records the events a ``Logger`` hands it as `level event key=value …`.
final class LogRecorder: LogHandler {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }

    func write(_ level: Logger.Level, _ event: String, _ fields: LogFields) {
        let line = ([level.name, event] + fields.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        lines.withLock { $0.append(line) }
    }
}

/// The logger a command or the daemon gives ``Runtime`` reaches the syncs it builds.
@Suite struct RuntimeLogTests {
    @Test func aSyncsRetriesReachTheRuntimesLoggerWithFeedAttemptAndWait() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("feedsync.json")
        // Port 9 on loopback refuses: a transient failure, tried twice.
        try Data(#"{"feeds": [{"name": "home", "maxAttempts": 2, "posts": {"integration": "httpapi", "baseURL": "http://127.0.0.1:9", "username": "demo", "passwordEnv": "PW"}}]}"#.utf8)
            .write(to: config)
        let recorder = LogRecorder()
        var options = Runtime.Options()
        options.log = Logger(minimum: .debug, handler: recorder)
        let runtime = try Runtime.load(configPath: config.path, environment: ["PW": "demo"], options)
        try await runtime.start()

        await #expect(throws: ServiceError.self) { try await runtime.engine(forFeed: "home").run() }
        await runtime.stop()

        let retries = recorder.all.filter { $0.hasPrefix("debug retry ") }
        #expect(retries.count == 1, "\(recorder.all)")
        #expect(retries.first?.contains("feed=home") == true && retries.first?.contains("attempt=1") == true
                && retries.first?.contains("wait_ms=") == true, "\(retries)")
    }

    @Test func settingNoticeGivesTheRuntimeALoggerThatHandsOnSentencesFromInfoUp() {
        let sentences = Mutex<[String]>([])
        var options = Runtime.Options()
        #expect(options.noticesToTerminal)
        options.notice = { sentence in sentences.withLock { $0.append(sentence) } }
        #expect(!options.noticesToTerminal)
        options.log.debug("retry", ["attempt": "1"])
        options.log.notice("upgrading the store: done")
        options.notice("waiting 5 s")
        #expect(sentences.withLock { $0 } == ["upgrading the store: done", "waiting 5 s"])
    }
}
