import Core
import Synchronization
import Testing

/// Records every event it is handed, as `level event key=value …`.
final class RecordingLogHandler: LogHandler {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }

    func write(_ level: Logger.Level, _ event: String, _ fields: LogFields) {
        let line = ([level.name, event] + fields.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        lines.withLock { $0.append(line) }
    }
}

@Suite struct LoggerTests {
    @Test func eventsBelowTheMinimumNeverReachTheHandler() {
        let handler = RecordingLogHandler()
        var log = Logger(minimum: .warn, handler: handler)
        log.debug("retry", ["attempt": "1"])
        log.info("sync_done")
        log.warn("slow", ["ms": "900"])
        log.error("failed")
        #expect(handler.all == ["warn slow ms=900", "error failed"])
        log.minimum = .debug
        log.debug("retry", ["attempt": "2"])
        #expect(handler.all.last == "debug retry attempt=2")
    }

    @Test func aNoticeIsAnInfoEventWithItsSentenceAsDetail() {
        let handler = RecordingLogHandler()
        Logger(handler: handler).notice("waiting 60 s")
        #expect(handler.all == ["info notice detail=waiting 60 s"])
    }

    @Test func aSentenceLoggerHandsOnNoticesAsTheyAreAndOtherEventsWithTheirFields() {
        let sentences = Mutex<[String]>([])
        let log = Logger(sentences: { sentence in sentences.withLock { $0.append(sentence) } })
        log.notice("upgrading the store: done")
        log.debug("retry", ["attempt": "1"])    // below info: dropped, as feedsync's stderr wants
        log.warn("lease_lost", ["feed": "home"])
        #expect(sentences.withLock { $0 } == ["upgrading the store: done", "lease_lost feed=home"])
    }

    @Test func theDisabledLoggerWritesNothingAndAContextBuiltWithoutOneUsesIt() {
        #expect(Logger.disabled.minimum == .error)
        let handler = RecordingLogHandler()
        let context = IntegrationContext(log: Logger(handler: handler))
        context.log.notice("the quota is spent; waiting 5 s")
        #expect(handler.all == ["info notice detail=the quota is spent; waiting 5 s"])
    }
}
