import Core
import Foundation
import StoreKit

extension ColumnKind {
    /// The type PostgreSQL's schema gives such a column.
    var postgresType: String {
        switch self {
        case .text: "text"
        case .integer: "bigint"
        case .real: "double precision"
        }
    }
}

extension PostColumns {
    /// The staging table a page's posts are copied into, column for column in the codec's order.
    static let stagingTable = """
        CREATE TEMP TABLE IF NOT EXISTS page_posts (\(columns.map { "\($0.name) \($0.kind.postgresType)" }
            .joined(separator: ", "))) ON COMMIT DELETE ROWS
        """
}

extension SQLValue {
    /// The value as libpq's text parameter (`nil` is NULL).
    var postgresText: String? {
        switch self {
        case .integer(let value): "\(value)"
        case .real(let value): "\(value)"
        case .text(let value): value
        case .null: nil
        }
    }
}

extension StoreStatement {
    /// The statement as one of a ``PostgresConnection/pipeline(_:)``.
    var pipelined: PostgresConnection.Statement { (sql, values.map(\.postgresText)) }
}

extension PostgresConnection: SQLConnection {
    /// Runs a shared statement (``StoreSQL``) with its values.
    ///
    /// - Returns: how many rows it returned.
    @discardableResult
    func run(_ shared: StoreStatement) throws -> Int {
        try query(shared.sql, shared.values.map(\.postgresText)).count
    }

    /// Runs a shared query (``StoreSQL``), each row read as it says.
    func query<Row>(_ shared: StoreQuery<Row>) throws -> [Row] {
        try query(shared.statement.sql, shared.statement.values.map(\.postgresText)).map { shared.row(PostgresRow($0)) }
    }
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

/// A PostgreSQL array literal of text values.
func pgArray(_ values: [String]) -> String {
    "{" + values.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        .joined(separator: ",") + "}"
}
