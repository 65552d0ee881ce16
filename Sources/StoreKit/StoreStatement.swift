/// A value bound to a statement's parameter. Integers are always 64-bit.
public enum SQLValue: Hashable, Sendable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null

    public static func integer(_ value: Int?) -> SQLValue { value.map { .integer(Int64($0)) } ?? .null }
    public static func integer(_ value: Int64?) -> SQLValue { value.map { .integer($0) } ?? .null }
    public static func text(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
    public static func real(_ value: Double?) -> SQLValue { value.map { .real($0) } ?? .null }
}

/// A statement in one store's dialect with its values, as ``StoreSQL`` makes it: the store
/// runs it in whatever transaction (and behind whatever fence) it has open. Only ``StoreSQL``
/// makes them, so a store that runs whatever it is given (``SQLStore/run(_:_:)``) runs only
/// the shared statements.
///
/// A statement that writes says what it wrote by the rows it returns (`RETURNING 1`), so both
/// stores count them the same way.
public struct StoreStatement: Hashable, Sendable {
    public let sql: String
    public let values: [SQLValue]

    init(_ sql: String, _ values: [SQLValue]) {
        self.sql = sql
        self.values = values
    }
}

/// A query in one store's dialect with its values, and how each of its rows reads as `Row`.
public struct StoreQuery<Row>: Sendable {
    public let statement: StoreStatement
    /// Reads one result row, by the positions of the query's select list.
    public let row: @Sendable (any ResultRow) -> Row

    init(_ sql: String, _ values: [SQLValue], row: @escaping @Sendable (any ResultRow) -> Row) {
        statement = StoreStatement(sql, values)
        self.row = row
    }
}
