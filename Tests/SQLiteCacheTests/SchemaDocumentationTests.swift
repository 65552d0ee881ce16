import Core
import Foundation
import ProcessTestSupport
@testable import SQLiteCache
import Synchronization
import Testing

/// The manual's schema table (docs/schema.md) against the schema a new store really has, so the manual cannot
/// go stale: every table and every column, in order, and nothing that is not there.
@Suite struct SchemaDocumentationTests {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/schema.md")

    /// `table → columns` from the rows between `<!-- schema:begin -->` and `<!-- schema:end -->`:
    /// `` | `posts` | `feed, id, …` and what they hold | ``.
    static func documentedSchema() throws -> [String: [String]] {
        let text = try String(contentsOf: readme, encoding: .utf8)
        guard let begin = text.range(of: "<!-- schema:begin -->"), let end = text.range(of: "<!-- schema:end -->") else {
            throw SchemaError("docs/schema.md has no schema:begin/schema:end markers")
        }
        var tables: [String: [String]] = [:]
        for line in text[begin.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, let columns = cells[1].split(separator: "`", omittingEmptySubsequences: false).dropFirst().first else { continue }
            tables[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = columns.split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return tables
    }

    struct SchemaError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test func theManualListsEveryTableAndColumnOfARealStore() async throws {
        try await withNewStoreFile("feedsync-schema") { path in
            let listing = try sqlite3(path, """
                SELECT m.name || ':' || group_concat(c.name, ',') FROM sqlite_master m, pragma_table_xinfo(m.name) c
                WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE 'posts_fts_%' AND c.hidden <> 1
                GROUP BY m.name ORDER BY m.name
                """)
            var real: [String: [String]] = [:]
            for line in listing.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                real[String(parts[0])] = parts[1].split(separator: ",").map(String.init)
            }
            let documented = try Self.documentedSchema()
            #expect(Set(documented.keys) == Set(real.keys), "tables: docs/schema.md \(documented.keys.sorted()), store \(real.keys.sorted())")
            for (table, columns) in real {
                #expect(documented[table] == columns, "\(table): docs/schema.md \(documented[table] ?? []), store \(columns)")
            }
        }
    }
}

/// A database written before sessions left it: the tokens move to the private file and leave
/// no trace in the database or its WAL.
@Suite struct SessionMigrationTests {
    @Test func tokensOfAnOlderStoreMoveOutOfTheDatabase() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("old.sqlite").path
        // The schema as release c587672 left it (migrations 001–004), with a stored session.
        let old = "PRAGMA journal_mode = WAL;\n" + SQLiteMigration.all.prefix(4).map(\.sql).joined(separator: "\n") + """

            CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL);
            INSERT INTO schema_migrations VALUES ('001_create_feed_tables', 1), ('002_daemon_state', 1), ('003_sync_run_counts', 1), ('004_rich_posts', 1);
            INSERT INTO sessions VALUES ('home', 'OLD-ACCESS-TOKEN-0123456789', 'OLD-REFRESH-TOKEN-0123456789', 1900000000000);
            INSERT INTO users (feed, id, handle, display_name) VALUES ('home', 'u1', 'ada', 'Ada');
            INSERT INTO posts (feed, id, author_id, text, created_at, video_ids) VALUES ('home', 'p1', 'u1', 'Toast with marmalade', 1700000000000, '["v1"]');
            INSERT INTO videos (feed, id) VALUES ('home', 'v1');
            """
        _ = try sqlite3(path, old)

        let notices = Notices()
        let store = SQLiteFeedStore(path: path, log: Logger(sentences: { notices.add($0) }))
        try await store.open()
        let session = try await store.takeFormerSession(ofFeed: "home", backend: "httpapi https://feed.example user me")

        // The posts an older store held are searchable, linked to their author and videos, and the upgrade said so.
        let hits = try await store.search(SearchQuery(text: "marmalade"))
        #expect(hits.map(\.stored.post.id) == ["p1"] && hits.first?.stored.post.author.handle == "ada")
        #expect(try sqlite3(path, "SELECT COUNT(*) FROM post_videos") == "1\n")
        #expect(notices.all.first?.contains("building the search index and linked tables for 1 post…") == true, "\(notices.all)")
        #expect(session?.accessToken.revealed == "OLD-ACCESS-TOKEN-0123456789")
        #expect(session?.refreshToken?.revealed == "OLD-REFRESH-TOKEN-0123456789")

        var bytes = Data()
        for file in [path, path + "-wal"] { bytes.append(FileManager.default.contents(atPath: file) ?? Data()) }
        for token in ["OLD-ACCESS-TOKEN-0123456789", "OLD-REFRESH-TOKEN-0123456789"] {
            #expect(bytes.range(of: Data(token.utf8)) == nil, "\(token) is still in the database")
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".sessions"), "the sessions moved on into the sessions database")
        let mode = try FileManager.default.attributesOfItem(atPath: path + ".sessions.sqlite")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try await store.takeFormerSession(ofFeed: "home", backend: "httpapi https://feed.example user me") == nil, "taken once")
        await store.close()
    }
}

final class Notices: Sendable {
    private let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Runs SQL through the sqlite3 command-line tool, as another program reading the store would.
func sqlite3(_ path: String, _ sql: String) throws -> String {
    String(decoding: try runSQLite3(path, sql).printed, as: UTF8.self)
}
