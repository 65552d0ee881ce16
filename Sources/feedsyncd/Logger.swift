import Core
import Foundation

/// One logfmt line per event on standard error:
/// `ts=2026-11-21T12:00:00Z level=info event=sync_done feed=home new=12 ms=84`.
///
/// Values are whatever the caller passes; callers pass error sentences and counts, never
/// secrets (tokens live only inside `Secret`, which prints as `<redacted>`).
struct Logger: Sendable {
    enum Level: Int, Comparable, Sendable, CaseIterable {
        case debug, info, warn, error

        var name: String { ["debug", "info", "warn", "error"][rawValue] }

        static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    var minimum: Level = .info

    func debug(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.debug, event, fields) }
    func info(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.info, event, fields) }
    func warn(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.warn, event, fields) }
    func error(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { write(.error, event, fields) }

    private func write(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, String>) {
        guard level >= minimum else { return }
        var line = "ts=\(Date().formatted(.iso8601)) level=\(level.name) event=\(event)"
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
