import Core

/// What is wrong with a full-text query FTS5 refused, in one sentence a person can act on.
enum SearchSyntax {
    /// The columns a query may name (`title:word`).
    static let columns = "text, title, content_warning, author_handle, author_name"

    /// The sentence for an error FTS5 raised while reading `query`, or `nil` when the error is
    /// not about the query (a failing disk, a corrupt file): that one is the store's.
    ///
    /// FTS5 reports every fault of a query as `SQLITE_ERROR` while the statement runs:
    /// `fts5: syntax error near "X"`, `unterminated string`, `unknown special query` (a lone `*`)
    /// and `no such column: X` (`X:word`, or `-X`, which FTS5 reads as "not in column X").
    static func reason(for error: SQLiteError, query: String) -> String? {
        guard error.code & 0xFF == 1 else { return nil }   // SQLITE_ERROR; BUSY, IOERR, CORRUPT… are the store's
        let message = error.message
        let shown = "the search query \"\(Terminal.safe(query, limit: 80))\""
        if message == "unterminated string" {
            return "\(shown) opens a phrase with a double quote (\") and never closes it; close it (\"sourdough bread\") or leave the quote out"
        }
        if message.hasPrefix("unknown special query") {
            return "\(shown) has a * with no word before it; a * ends a prefix, as in sourd*"
        }
        if message.hasPrefix("no such column: ") {
            let column = Terminal.safe(String(message.dropFirst("no such column: ".count)), limit: 60)
            return "\(shown) names a column \"\(column)\" that posts do not have (a word before : or after - names a column); "
                + "use one of \(columns), or quote the word (\"\(column)\") to search for it"
        }
        if message == "fts5: syntax error near \"\"" {
            return "\(shown) ends where a word must follow (after an operator such as AND, OR, NOT or NEAR, an opening bracket, or a column name)"
        }
        if message.hasPrefix("fts5: syntax error near ") {
            let near = Terminal.safe(String(message.dropFirst("fts5: syntax error near ".count)), limit: 60)
            return "\(shown) cannot be read at \(near); quote words that are operators (AND, OR, NOT, NEAR) or punctuation to search for them"
        }
        if message.hasPrefix("fts5:") || message.hasPrefix("malformed MATCH") {
            return "\(shown) is not valid search syntax (\(Terminal.safe(message, limit: 120)))"
        }
        return nil
    }
}
