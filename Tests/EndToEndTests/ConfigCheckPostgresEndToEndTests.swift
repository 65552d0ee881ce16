import Foundation
import PostgresTestSupport
import Testing

/// `feedsync config check` against a PostgreSQL store only reads: it neither creates nor upgrades the schema.
@Suite(.endToEnd, .needsPostgres) struct ConfigCheckPostgresEndToEndTests {
    static let notRead = "store: what it remembers (feeds discovered or moved) was not read: "

    @Test func anEmptyDatabaseIsNotGivenASchema() async throws {
        let database = try await PostgresServer.makeDatabase()
        let scratch = try Scratch()
        let config = try scratch.writePostgresConfig(database, baseURL: "http://127.0.0.1:9")
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains(Self.notRead + "nothing synced yet\n"), "\(check.stdout)")
        #expect(try await psql(database, "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'") == "0")
    }

    @Test func anOlderSchemaIsNotUpgraded() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 5, pageSize: 100)
        let scratch = try Scratch()
        let config = try scratch.writePostgresConfig(database, baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        // As an older feedsync left it: the last migration not applied.
        try await psql(database, """
            DROP INDEX posts_reposts; ALTER TABLE feeds DROP COLUMN stream_position;
            DELETE FROM schema_migrations WHERE name = '006_live_stream'
            """)
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains(Self.notRead + "its schema is older (1 upgrade to apply); the next `feedsync pull` upgrades it\n"),
                "\(check.stdout)")
        #expect(try await psql(database, "SELECT COUNT(*) FROM schema_migrations WHERE name = '006_live_stream'") == "0")
        #expect(try await psql(database, "SELECT COUNT(*) FROM information_schema.columns WHERE column_name = 'stream_position'") == "0")
    }

    @Test func aServerThatIsDownIsOneLine() async throws {
        let scratch = try Scratch()
        let url = scratch.folder.appendingPathComponent("down.json")
        try Data("""
            {"store": {"integration": "postgres", "url": "postgresql://feedsync@127.0.0.1:9/feedsync?sslmode=disable"},
             "feeds": [{"name": "blog", "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/feed.xml"}}]}
            """.utf8).write(to: url)
        let check = try await feedsync(["config", "check", "--config", url.path])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains(Self.notRead + "connection to server at \"127.0.0.1\", port 9 failed"), "\(check.stdout)")
    }
}
