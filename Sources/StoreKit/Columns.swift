import Foundation

/// Where a codec writes a row's values, one column after another in the codec's column order.
///
/// Each store conforms its own fast buffer (SQLite's `RowBuffer`, PostgreSQL's COPY line), so
/// the codec decides the values and the store decides how they travel.
public protocol ColumnWriter {
    mutating func text(_ value: String?)
    mutating func integer(_ value: Int64?)
}

/// One row of a query's result, read by column position.
///
/// A codec never reads a position it did not look up by name first (``ColumnLayout``).
public protocol ResultRow {
    func text(_ column: Int) -> String?
    func integer(_ column: Int) -> Int64?
    func real(_ column: Int) -> Double?
}

/// The SQL type a column is declared with.
public enum ColumnKind: Sendable {
    case text, integer, real
}

/// A query result's column names, looked up once per query so each row is read by name at
/// the cost of reading it by position.
public struct ColumnLayout: Sendable {
    private let positions: [String: Int]

    /// - Parameter names: the result's column names, in order (`sqlite3_column_name`, `PQfname`).
    public init(_ names: [String]) {
        var positions: [String: Int] = [:]
        // The first of two equal names wins, as `SELECT *` readers expect.
        for (position, name) in names.enumerated() where positions[name] == nil { positions[name] = position }
        self.positions = positions
    }

    /// The position of the column named `name`.
    ///
    /// - Throws: ``MissingColumn`` when the query has no such column (a query and its codec
    ///   disagree: a fault of the program, reported rather than trapped on).
    public func position(of name: String) throws -> Int {
        guard let position = positions[name] else { throw MissingColumn(name: name) }
        return position
    }
}

/// A query lacks a column its codec reads.
public struct MissingColumn: Error, Equatable, CustomStringConvertible {
    public var name: String
    public var description: String { "the query has no column \(name)" }
}

/// Milliseconds since 1970 (UTC), as every store keeps times, so equal times compare equal in SQL.
public enum StoredTime {
    /// A time beyond what 64 bits of milliseconds hold (no real one is) is clamped, never trapped on.
    public static func milliseconds(_ date: Date) -> Int64 {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite else { return milliseconds > 0 ? .max : .min }
        return Int64(exactly: milliseconds) ?? (milliseconds > 0 ? .max : .min)
    }

    public static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}
