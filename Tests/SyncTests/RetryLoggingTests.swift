import Core
import Foundation
import Synchronization
import Sync
import Testing

/// Records every event a ``Logger`` hands it, with its level and fields.
final class RecordingLog: LogHandler {
    struct Event: Sendable {
        let level: Logger.Level
        let name: String
        let fields: [String: String]
    }
    private let recorded = Mutex<[Event]>([])
    var events: [Event] { recorded.withLock { $0 } }

    func write(_ level: Logger.Level, _ event: String, _ fields: LogFields) {
        let entry = Event(level: level, name: event, fields: Dictionary(fields.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }))
        recorded.withLock { $0.append(entry) }
    }
}

/// Retries and waits are visible: each one is a `debug` event `retry` with its attempt and wait.
@Suite struct RetryLoggingTests {
    let calls = CallLog()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func makeEngine(posts: MockPosts, log: Logger, sleeps: SleepRecorder) -> SyncEngine {
        let services = SyncEngine.Services(authentication: MockAuthentication(log: calls), posts: posts,
                                           videos: MockVideos(log: calls), store: MockStore(log: calls), requests: RequestCounter())
        var options = SyncEngine.Options()
        options.log = log
        let now = self.now
        return SyncEngine(feed: "home", services: services, options: options, now: { now }, sleep: { sleeps.record($0) })
    }

    @Test func eachTransientRetryIsLoggedWithItsAttemptAndTheWaitItSleeps() async throws {
        let sleeps = SleepRecorder()
        let handler = RecordingLog()
        let down = ServiceError(.unavailable, "fetching page 1", "the server answered 503")
        let posts = MockPosts(log: calls, [.failure(down), .failure(down), .success(makePage([makePost("p1")], cursor: "1", hasMore: false))])

        _ = try await makeEngine(posts: posts, log: Logger(minimum: .debug, handler: handler), sleeps: sleeps).run()

        let retries = handler.events.filter { $0.name == "retry" }
        #expect(retries.map(\.level) == [.debug, .debug])
        #expect(retries.map { $0.fields["attempt"] } == ["1", "2"])
        #expect(retries.map { $0.fields["wait_ms"] } == sleeps.waits.map { "\(Int(($0 * 1000).rounded()))" }, "the wait logged is the wait slept")
        #expect(retries.allSatisfy { $0.fields["feed"] == "home" && $0.fields["operation"] == "fetching page 1"
                                     && $0.fields["reason"] == "the server answered 503" })
    }

    @Test func aRateLimitWaitIsLoggedAtDebugAndAsANoticeAnOperatorSees() async throws {
        let sleeps = SleepRecorder()
        let handler = RecordingLog()
        let posts = MockPosts(log: calls, [.failure(ServiceError(.rateLimited(until: now + 7), "fetching", "429")),
                                           .success(makePage([makePost("p1")], cursor: "1", hasMore: false))])

        _ = try await makeEngine(posts: posts, log: Logger(minimum: .debug, handler: handler), sleeps: sleeps).run()

        #expect(handler.events.map(\.name) == ["retry", "notice"])
        #expect(handler.events[0].fields["attempt"] == "1" && handler.events[0].fields["wait_ms"] == "7000")
        #expect(handler.events[1].level == .info && handler.events[1].fields["detail"] == "fetching: rate limited; waiting 7 s as the server asks")
    }

    @Test func atInfoRetriesStayOutOfTheLog() async throws {
        let sleeps = SleepRecorder()
        let handler = RecordingLog()
        let down = ServiceError(.unavailable, "fetching", "the server answered 503")
        let posts = MockPosts(log: calls, [.failure(down), .success(makePage([makePost("p1")], cursor: "1", hasMore: false))])

        _ = try await makeEngine(posts: posts, log: Logger(minimum: .info, handler: handler), sleeps: sleeps).run()

        #expect(sleeps.waits.count == 1)
        #expect(handler.events.isEmpty)
    }
}
