import Foundation

/// Mastodon's times: ISO 8601 in UTC with milliseconds (`2026-11-21T13:30:00.000Z`), with or
/// without the fraction; some servers send an offset instead of `Z`.
enum RFC3339Date {
    static func parse(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle())
    }
}
