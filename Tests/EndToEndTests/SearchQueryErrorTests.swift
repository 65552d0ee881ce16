import Foundation
import PostgresTestSupport
import Testing

/// A query the search engine cannot read is the user's mistake: `feedsync search` exits 64 with
/// one sentence that says what is wrong with it, never 70 ("internal") with the engine's words.
@Suite(.endToEnd) struct SearchQueryErrorTests {
    /// FTS5's query grammar, broken each way it can be: an open phrase, a lone or leading `*`, a
    /// column it does not have (`col:word`, `-col`), an operator or bracket with nothing after
    /// it, an operator with nothing before it, punctuation outside a phrase.
    static let sqliteCases: [(query: String, says: String)] = [
        ("\"hello", "never closes it"),
        ("\"", "never closes it"),
        ("say \"hello world", "never closes it"),
        ("*", "a * with no word before it"),
        ("nosuchcolumn:hello", "names a column \"nosuchcolumn\""),
        ("bread -hello", "names a column \"hello\""),
        ("hello:world", "names a column \"hello\""),
        ("hello AND", "ends where a word must follow"),
        ("(hello", "ends where a word must follow"),
        ("NEAR(", "ends where a word must follow"),
        ("title:", "ends where a word must follow"),
        ("AND", "cannot be read at \"AND\""),
        ("NOT hello", "cannot be read at \"NOT\""),
        ("hello)", "cannot be read at \")\""),
        ("+", "cannot be read at \"+\""),
        (".", "cannot be read at \".\""),
    ]

    @Test func everyFTS5SyntaxOrColumnErrorIsAUsageError() async throws {
        let server = try ReferenceServer(posts: 20)
        defer { withExtendedLifetime(server) {} }
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        for (query, says) in Self.sqliteCases {
            let result = try await feedsync(["search", query, "--config", config], environment: [:])
            let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(result.status == 64, "\(query): exit \(result.status), \(result.stderr)")
            #expect(first.hasPrefix("feedsync: the search query \"") && first.contains(says), "\(query): \(first)")
            #expect(!first.contains("SQLite") && !first.contains("fts5"), "\(query): the engine's own words stay out: \(first)")
        }
        // What FTS5 does read still searches.
        for query in ["\"sourdough bread\"", "title:sourdough OR sourd*", "{text title}: sourdough", "\"hello\""] {
            let result = try await feedsync(["search", query, "--config", config], environment: [:])
            #expect(result.status == 0, "\(query): \(result.stderr)")
        }
    }

    @Test(.needsPostgres) func aQueryTooDeepForPostgresTextSearchIsAUsageError() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 20)
        defer { withExtendedLifetime(server) {} }
        let scratch = try Scratch()
        let config = try scratch.writePostgresConfig(database, baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        // Forty thousand nested phrases: websearch_to_tsquery reads them, then runs out of stack.
        let deep = String(repeating: "\"a ", count: 40_000)
        let result = try await feedsync(["search", deep, "--config", config], environment: [:])
        let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(result.status == 64, "exit \(result.status): \(first.prefix(300))")
        #expect(first.contains("is more than PostgreSQL's text search can take (stack depth limit exceeded)"), "\(first.suffix(300))")
        for query in ["\"hello", "*", "nosuchcolumn:hello", "AND", "-"] {
            let read = try await feedsync(["search", query, "--config", config], environment: [:])
            #expect(read.status == 0, "web-search syntax reads any text: \(query): \(read.stderr)")
        }
    }
}
