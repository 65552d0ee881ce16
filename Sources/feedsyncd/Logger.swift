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

    /// Quotes a value that holds spaces, quotes, `=` or line breaks, as logfmt readers expect.
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) else { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }
}
