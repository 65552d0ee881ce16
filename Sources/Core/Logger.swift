/// An event's fields in order, as a ``LogHandler`` receives them.
public typealias LogFields = [(key: String, value: String)]

/// Where a ``Logger``'s events go: the daemon's logfmt lines, `feedsync`'s sentences on
/// standard error, or a test's recording.
public protocol LogHandler: Sendable {
    /// Writes one event the logger let through (at or above its ``Logger/minimum``).
    ///
    /// - Parameters:
    ///   - event: what happened, as a `snake_case` word: `retry`, `sync_done`, `notice`.
    ///   - fields: what it happened to, as text: counts, names, error sentences, already
    ///     redacted (``Redaction``).
    func write(_ level: Logger.Level, _ event: String, _ fields: LogFields)
}

/// A logger with levels, passed in (swift-log's shape) so that waits and retries deep inside an
/// integration or a sync show in the daemon's log.
///
/// An event is a word and a few fields. What an operator should see while it happens (a wait
/// for a quota, a store upgrade, a backend that changed) is an `info` event `notice` whose
/// `detail` is one sentence (``notice(_:)``); each retry and wait is a `debug` event with its
/// attempt and wait.
///
/// Every field passes through ``Redaction`` before a handler sees it, so a server's message
/// that repeats a registered secret is logged with `[redacted]` in its place, whatever the
/// handler.
///
///     var log = Logger(handler: handler)
///     log.minimum = .debug
///     log.debug("retry", ["feed": "home", "attempt": "2", "wait_ms": "412"])
///     log.notice("feed home: the server's request quota is spent; waiting 60 s")
public struct Logger: Sendable {
    /// How much an event matters, from `debug` (what a person chasing a fault wants) to `error`.
    public enum Level: Int, Comparable, Sendable, CaseIterable {
        case debug, info, warn, error

        /// `debug`, `info`, `warn` or `error`, as `--log-level` takes and a log line shows it.
        public var name: String { ["debug", "info", "warn", "error"][rawValue] }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Events below this level are dropped before they reach the handler.
    public var minimum: Level
    private let handler: any LogHandler

    public init(minimum: Level = .info, handler: any LogHandler) {
        self.minimum = minimum
        self.handler = handler
    }

    /// A logger that writes nothing: the default of whatever is built without one.
    public static let disabled = Logger(minimum: .error, handler: DiscardingLogHandler())

    /// A logger that hands each event at `info` or above to `sentence` as one sentence: a
    /// notice's `detail` as it is, any other event as its word and fields (`feedsync`'s
    /// standard error, and whoever still wants notices as sentences).
    public init(sentences sentence: @escaping @Sendable (String) -> Void) {
        self.init(minimum: .info, handler: SentenceLogHandler(sentence: sentence))
    }

    public func debug(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.debug, event, fields) }
    public func info(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, event, fields) }
    public func warn(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warn, event, fields) }
    public func error(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, event, fields) }

    /// What an operator should see while it happens, in one sentence: an `info` event `notice`.
    public func notice(_ sentence: String) { log(.info, "notice", ["detail": sentence]) }

    public func log(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= minimum else { return }
        handler.write(level, Redaction.redact(event), fields.map { (key: Redaction.redact($0.key), value: Redaction.redact($0.value)) })
    }
}

private struct DiscardingLogHandler: LogHandler {
    func write(_ level: Logger.Level, _ event: String, _ fields: LogFields) {}
}

private struct SentenceLogHandler: LogHandler {
    let sentence: @Sendable (String) -> Void

    func write(_ level: Logger.Level, _ event: String, _ fields: LogFields) {
        if event == "notice", fields.count == 1, fields[0].key == "detail" {
            sentence(fields[0].value)
        } else {
            sentence(([event] + fields.map { "\($0.key)=\($0.value)" }).joined(separator: " "))
        }
    }
}
