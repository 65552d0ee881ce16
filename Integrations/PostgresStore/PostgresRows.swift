import Core
import Foundation
import StoreKit

extension PostColumns {
    /// The staging table a page's posts are copied into, column for column in the codec's order.
    static let stagingTable = """
        CREATE TEMP TABLE IF NOT EXISTS page_posts (\(columns.map { "\($0.name) \($0.kind == .text ? "text" : "bigint")" }
            .joined(separator: ", "))) ON COMMIT DELETE ROWS
        """
}

/// Times are stored as whole milliseconds since 1970 (``StoredTime``, shared with SQLite).
func milliseconds(_ date: Date) -> Int64 { StoredTime.milliseconds(date) }

extension Date {
    init(pgMilliseconds text: String?) { self.init(timeIntervalSince1970: Double(Int64(text ?? "") ?? 0) / 1000) }
}

/// A page's authors as a `jsonb` parameter: StoreKit's JSON, NUL (which PostgreSQL's text and
/// `jsonb` cannot hold) as U+FFFD, as everywhere else this store writes text.
func jsonText(_ users: [UserColumns]) -> String { UserColumns.json(users, dialect: .postgres) }

/// A batch of resolved videos as a `jsonb` parameter, written as the authors above are.
func jsonText(_ videos: [VideoColumns]) -> String { VideoColumns.json(videos, dialect: .postgres) }

/// Text for a libpq parameter: a NUL would end the C string there, so it becomes U+FFFD.
func withoutNUL(_ text: String) -> String {
    text.utf8.contains(0) ? text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : text
}
