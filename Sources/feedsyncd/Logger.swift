import Core
import Foundation

extension Logger {
    /// The daemon's logger: ``LogfmtHandler`` lines on standard error from `info` up.
    init() {
        self.init(minimum: .info, handler: LogfmtHandler())
    }

    /// One `item_skipped` warning per item a committed page dropped, with its id and reason: the
    /// same line for a poll's page and a live stream's batch.
    func skipped(_ items: [SkippedItem], feed: String) {
        for item in items {
            warn("item_skipped", ["feed": feed, "id": item.id ?? "-", "reason": item.reason])
        }
    }
}

/// One logfmt line per event on standard error:
/// `ts=2026-11-21T12:00:00Z level=info event=sync_done feed=home new=12 ms=84`.
///
/// Values come redacted from the ``Logger`` (``Redaction``); ``quoted(_:)`` redacts again as it
/// makes them safe, so a line written here some other way keeps no secret either.
struct LogfmtHandler: LogHandler {
    func write(_ level: Logger.Level, _ event: String, _ fields: LogFields) {
        var line = "ts=\(Date().formatted(.iso8601)) level=\(level.name) event=\(Terminal.safe(event, limit: 200))"
        for (key, value) in fields { line += " \(key)=\(Self.quoted(value))" }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Quotes a value that holds spaces, quotes, `=` or escapes, as logfmt readers expect.
    /// Control characters from outside are escaped first (``Terminal/safe(_:limit:)``), so a
    /// value can neither end the line nor send a terminal escape.
    static func quoted(_ value: String) -> String {
        let safe = Terminal.safe(value, limit: 2_000)
        guard safe.isEmpty || safe.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" }) else { return safe }
        return "\"" + safe.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
