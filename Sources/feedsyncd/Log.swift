import Foundation

/// One logfmt line per event on standard error: `ts=… level=info feed=home event=sync_done new=12`.
enum Log {
    static func info(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { write("info", event, fields) }
    static func error(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { write("error", event, fields) }

    private static func write(_ level: String, _ event: String, _ fields: KeyValuePairs<String, String>) {
        var line = "ts=\(Date().formatted(.iso8601)) level=\(level) event=\(event)"
        for (key, value) in fields { line += " \(key)=\(quoted(value))" }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Quotes a value when it holds spaces, quotes or `=`, as logfmt readers expect.
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) else { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }
}
