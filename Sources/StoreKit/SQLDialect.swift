/// What differs between the SQL the two stores speak, for the statements they share (``StoreSQL``).
///
/// A shared statement is written once, with PostgreSQL's numbered placeholders (`$1`) and the
/// standard null-safe comparison (`IS DISTINCT FROM`); ``render(_:)`` turns it into this
/// dialect's. SQLite numbers its placeholders `?1`, and says `IS NOT` (its `IS DISTINCT FROM`
/// came in 3.39, later than Ubuntu 22.04's 3.37). Everything else a shared statement uses means
/// the same in both: `INSERT … ON CONFLICT … DO UPDATE … WHERE`, `excluded.`, `RETURNING`.
///
/// ```swift
/// SQLDialect.sqlite.render("UPDATE feeds SET backend = $2 WHERE name = $1 AND backend IS DISTINCT FROM $2")
/// // UPDATE feeds SET backend = ?2 WHERE name = ?1 AND backend IS NOT ?2
/// ```
public struct SQLDialect: Hashable, Sendable {
    /// The database engine.
    public enum Engine: Hashable, Sendable {
        case sqlite, postgres
    }

    public let engine: Engine

    /// SQLite: `?1`, `IS NOT`.
    public static let sqlite = SQLDialect(engine: .sqlite)
    /// PostgreSQL: `$1`, `IS DISTINCT FROM`.
    public static let postgres = SQLDialect(engine: .postgres)

    /// Whether its text holds NUL. PostgreSQL's text (and `jsonb`) cannot: its store writes
    /// U+FFFD in a NUL's place, in every text it keeps, JSON columns' strings included.
    public var textHoldsNUL: Bool { engine == .sqlite }

    /// A shared statement in this dialect.
    ///
    /// - Parameter sql: written with `$1`…`$N` and `IS [NOT] DISTINCT FROM`, no `$` or those
    ///   words inside a string literal.
    public func render(_ sql: String) -> String {
        guard engine == .sqlite else { return sql }
        let compared = sql.replacingOccurrences(of: "IS NOT DISTINCT FROM", with: "IS")
            .replacingOccurrences(of: "IS DISTINCT FROM", with: "IS NOT")
        var rendered = ""
        rendered.reserveCapacity(compared.utf8.count)
        var previous: Character?
        for character in compared {
            // `$` before a digit opens a placeholder: SQLite's `?N` takes the same number.
            if previous == "$", character.isASCII, character.isNumber {
                rendered.removeLast()
                rendered.append("?")
            }
            rendered.append(character)
            previous = character
        }
        return rendered
    }
}
