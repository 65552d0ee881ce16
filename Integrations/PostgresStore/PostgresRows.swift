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
    /// The columns a page's posts travel in: the codec's, in its order, then `search_words`, the
    /// post's own words (``PostgresSearchWords``) or NULL for the server to make: a `tsvector`
    /// literal in a short page's JSON, a binary `tsvector` in a long page's COPY.
    static let staged = columns + [("search_words", .text)]

    /// The staging table a page's posts are copied into, column for column in ``staged`` order.
    static let stagingTable = """
        CREATE TEMP TABLE IF NOT EXISTS page_posts (\(columns.map { "\($0.name) \($0.kind.postgresType)" }
            .joined(separator: ", ")), search_words tsvector) ON COMMIT DELETE ROWS
        """

    /// `posts.search` of a post whose own columns are `row`'s and whose author is `author`'s
    /// (`handle`, `display_name`): the words of the text, title, content warning, handle and
    /// name, as `to_tsvector('simple', …)` makes them (as the generated column of migrations 001
    /// to 021 did). Where the page brought the post's own words (`search_words`), the author's
    /// (`authorWords`, ``authorWords(_:)``, NULL for no author) are numbered on after them, as
    /// one vector of the whole would number them.
    static func search(row: String, author: String, authorWords: String) -> String { """
        CASE WHEN \(row).search_words IS NULL THEN \(searchVector(row: row, author: author))
        ELSE \(row).search_words::tsvector || coalesce(\(authorWords), ''::tsvector) END
        """
    }

    /// The words of an author's handle and name (`author`'s `handle` and `display_name`).
    static func authorWords(_ author: String) -> String {
        "to_tsvector('simple', coalesce(\(author).handle, '') || ' ' || coalesce(\(author).display_name, ''))"
    }

    /// `to_tsvector('simple', …)` of the post's own columns in `row` and its author's in `author`.
    static func searchVector(row: String, author: String) -> String {
        "to_tsvector('simple', coalesce(\(row).text, '') || ' ' || coalesce(\(row).title, '') || ' ' || coalesce(\(row).content_warning, '')"
            + " || ' ' || coalesce(\(author).handle, '') || ' ' || coalesce(\(author).display_name, ''))"
    }
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

/// A PostgreSQL array literal of text values: each quoted, its backslashes and quotes escaped.
///
/// Written byte by byte: Foundation's `replacingOccurrences` made it half of the store queue's
/// time in a cold sync, on the path between the server's answers (a page's video ids).
func pgArray(_ values: [String]) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(values.reduce(2) { $0 + $1.utf8.count + 3 })
    bytes.append(0x7B)   // {
    for (index, value) in values.enumerated() {
        if index > 0 { bytes.append(0x2C) }
        bytes.append(0x22)
        for byte in value.utf8 {
            if byte == 0x5C || byte == 0x22 { bytes.append(0x5C) }
            bytes.append(byte)
        }
        bytes.append(0x22)
    }
    bytes.append(0x7D)   // }
    return String(decoding: bytes, as: UTF8.self)
}
