import Core
import Foundation

/// The statements both stores run, written once, in one store's ``SQLDialect``.
///
/// A store keeps one (`static let sql = StoreSQL(.sqlite)`) and runs what it makes in its own
/// transactions and behind its own fences: what differs between the stores is how they hold a
/// feed (a file lock, a lease row) and reach the server, never what a statement says. Each
/// statement is rendered once per dialect, so its text is the same at every call (SQLite keeps
/// its prepared statements by their text).
///
/// Its parts, one file each: the `feeds` row (cursor, stream position, backend: here), run
/// records and statuses (`+Runs`), authors (`+Authors`), videos (`+Videos`), read marks and
/// daemons (`+Marks`), live states and purges (`+LiveState`, `+Purge`).
///
/// ```swift
/// let sql = StoreSQL(.postgres)
/// let set = sql.setBackend("example", ofFeed: "home")   // set.sql, set.values
/// ```
public struct StoreSQL: Sendable {
    public let dialect: SQLDialect

    public init(_ dialect: SQLDialect) { self.dialect = dialect }

    /// A statement written once in the shared form (``SQLDialect/render(_:)``), kept rendered
    /// in both dialects.
    struct Shared: Sendable {
        private let sqlite: String
        private let postgres: String

        init(_ sql: String) {
            sqlite = SQLDialect.sqlite.render(sql)
            postgres = sql
        }

        subscript(_ dialect: SQLDialect) -> String { dialect.engine == .sqlite ? sqlite : postgres }
    }

    func statement(_ shared: Shared, _ values: [SQLValue]) -> StoreStatement { StoreStatement(shared[dialect], values) }

    func query<Row>(_ shared: Shared, _ values: [SQLValue], row: @escaping @Sendable (any ResultRow) -> Row) -> StoreQuery<Row> {
        StoreQuery(shared[dialect], values, row: row)
    }

    // MARK: The feed's row

    private static let cursor = Shared("SELECT cursor, cursor_validator FROM feeds WHERE name = $1")
    private static let moveCursor = Shared("""
        INSERT INTO feeds (name, cursor, cursor_validator) VALUES ($1, $2, $3)
        ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor, cursor_validator = excluded.cursor_validator
        WHERE feeds.cursor IS DISTINCT FROM excluded.cursor OR feeds.cursor_validator IS DISTINCT FROM excluded.cursor_validator
        RETURNING 1
        """)
    private static let streamPosition = Shared("SELECT stream_position FROM feeds WHERE name = $1")
    private static let setStreamPosition = Shared("UPDATE feeds SET stream_position = $2 WHERE name = $1")
    private static let backend = Shared("SELECT backend FROM feeds WHERE name = $1")
    private static let setBackend = Shared("""
        INSERT INTO feeds (name, backend) VALUES ($1, $2)
        ON CONFLICT (name) DO UPDATE SET backend = excluded.backend WHERE feeds.backend IS DISTINCT FROM excluded.backend
        """)
    private static let feedNames = Shared("SELECT name FROM feeds UNION SELECT DISTINCT feed FROM posts ORDER BY 1")

    /// The feed's cursor; no row, or a row without one, is `nil`.
    public func cursor(ofFeed feed: String) -> StoreQuery<FeedCursor?> {
        query(Self.cursor, [.text(feed)]) { row in row.text(0).map { FeedCursor(position: $0, validator: row.text(1)) } }
    }

    /// Moves the feed's cursor, making its row if need be; one row returned when it moved.
    public func moveCursor(to cursor: FeedCursor, ofFeed feed: String) -> StoreStatement {
        statement(Self.moveCursor, [.text(feed), .text(cursor.position), .text(cursor.validator)])
    }

    /// Where the feed's live stream had got to, as the last page that carried one left it.
    public func streamPosition(ofFeed feed: String) -> StoreQuery<String?> {
        query(Self.streamPosition, [.text(feed)]) { $0.text(0) }
    }

    /// Records the stream position a page carried, in the page's transaction.
    public func setStreamPosition(_ position: String, ofFeed feed: String) -> StoreStatement {
        statement(Self.setStreamPosition, [.text(feed), .text(position)])
    }

    /// The integration that last synced the feed (`mastodon`, `bluesky`, …).
    public func backend(ofFeed feed: String) -> StoreQuery<String?> {
        query(Self.backend, [.text(feed)]) { $0.text(0) }
    }

    /// Records the feed's integration; a row that says so already is not rewritten.
    public func setBackend(_ backend: String, ofFeed feed: String) -> StoreStatement {
        statement(Self.setBackend, [.text(feed), .text(backend)])
    }

    /// Every feed the store holds a row or posts for, by name.
    public func feedNames() -> StoreQuery<String> {
        query(Self.feedNames, []) { $0.text(0) ?? "" }
    }
}
