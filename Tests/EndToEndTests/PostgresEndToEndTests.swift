import Foundation
import PostgresTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs SQL on a test database with `psql`; the rows as lines, columns split by `|`.
@discardableResult
func psql(_ database: PostgresDatabase, _ sql: String) async throws -> String {
    let result = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["psql"] + database.psqlArguments(sql))
    guard result.status == 0 else { throw HarnessError("psql failed: \(result.stderr)") }
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Every stored post of a PostgreSQL mirror as `feed|id|text|edited_at`, like ``ReferenceServer/snapshot()`` per feed.
func storedPosts(_ database: PostgresDatabase) async throws -> [String: [String]] {
    let rows = try await psql(database, """
        SELECT feed || '|' || id || '|' || text || '|'
               || COALESCE(to_char(to_timestamp(edited_at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '')
        FROM posts ORDER BY feed, id
        """)
    var byFeed: [String: [String]] = [:]
    for line in rows.split(separator: "\n") {
        let parts = line.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        byFeed[String(parts[0]), default: []].append(String(parts[1]))
    }
    return byFeed.mapValues { $0.sorted() }
}

extension Scratch {
    /// A config of `feeds` httpapi feeds (`f00`, `f01`…) on one server, stored in PostgreSQL.
    func writePostgresConfig(_ database: PostgresDatabase, baseURL: String, feeds: Int = 1, pageSize: Int = 100,
                             interval: String = "5m", storeKeys: String = "", daemon: String = "{}") throws -> String {
        let entries = (0..<feeds).map { index in
            """
            {"name": "\(String(format: "f%02d", index))", "interval": "\(interval)",
             "posts": {"integration": "httpapi", "baseURL": "\(baseURL)", "username": "demo",
                       "passwordEnv": "FEEDSYNC_PASSWORD", "pageSize": \(pageSize)}}
            """
        }
        let json = """
            {"store": {"integration": "postgres", "url": "\(database.url)"\(storeKeys)},
             "feeds": [\(entries.joined(separator: ",\n"))],
             "daemon": \(daemon)}
            """
        let url = folder.appendingPathComponent("feedsync-postgres.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only where a PostgreSQL server can be started; elsewhere it shows as skipped.
    static var needsPostgres: Self {
        .enabled("needs a PostgreSQL server the tests can start (see the printed reason)") { await PostgresServer.folder() != nil }
    }
}

/// The PostgreSQL store through the real binaries, on a server the tests start.
@Suite(.endToEnd, .needsPostgres) struct PostgresEndToEndTests {
    @Test func pullMirrorsIntoPostgresAndWaitsForAFeedAnotherWorkerHolds() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 450, pageSize: 100)
        let scratch = try Scratch()
        let config = try scratch.writePostgresConfig(database, baseURL: server.baseURL)

        let first = try await feedsync(["pull", "--config", config])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try await storedPosts(database)["f00"] == server.snapshot())
        try await server.control("POST", "/_control/edit?id=p0000007")
        try await server.control("POST", "/_control/delete?id=p0000009")
        try await server.control("POST", "/_control/append?count=3")
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        #expect(try await storedPosts(database)["f00"] == server.snapshot())
        #expect(try await psql(database, "SELECT string_agg(name, ',' ORDER BY name) FROM schema_migrations") == "001_schema,002_feeds_scheduled_by,003_sweep_withheld,004_account_sessions,005_video_stats_discovered_feeds,006_live_stream,007_live_state_profile_trigger,008_stars_serve_users,009_webhook_deliveries,010_media,011_serve_feed_tokens,012_retention_record,013_posts_listing,015_feed_versions,017_video_likes_author_media_files,020_feed_versions_per_statement,021_posts_author_keys_unchecked,022_posts_search_written,023_video_links_unchecked")
        // post_videos links every video a post lists, in its order.
        let listed = try await psql(database, """
            SELECT string_agg(p.id || ':' || j.ordinality || ':' || j.id, ',' ORDER BY p.id, j.ordinality)
            FROM posts p, jsonb_array_elements_text(p.video_ids::jsonb) WITH ORDINALITY AS j(id, ordinality)
            """)
        let linked = try await psql(database, """
            SELECT string_agg(p.id || ':' || (l.position + 1) || ':' || v.id, ',' ORDER BY p.id, l.position)
            FROM post_videos l JOIN posts p ON p.pk = l.post_pk JOIN videos v ON v.pk = l.video_pk
            """)
        #expect(!listed.isEmpty && linked == listed)

        // Another worker holds the feed: pull waits for it, then gives up with 75, naming it.
        try await psql(database, """
            UPDATE feed_leases SET holder = 'feedsyncd on elsewhere, process 4242', instance = 'elsewhere/4242/1', token = 'theirs',
                expires_at = (extract(epoch from clock_timestamp()) * 1000)::bigint + 3600000 WHERE feed = 'f00'
            """)
        let started = Date()
        let waited = try await feedsync(["pull", "--config", config, "--wait", "1"])
        #expect(waited.status == 75)
        #expect(waited.stderr.contains("feedsyncd on elsewhere, process 4242"), "\(waited.stderr)")
        #expect(Date().timeIntervalSince(started) >= 1)
        let status = try await feedsync(["status", "--config", config])
        #expect(status.stdout.contains("syncing now:  feedsyncd on elsewhere, process 4242"), "\(status.stdout)")
        // A lease that ran out is taken over, and the pull says from whom.
        try await psql(database, "UPDATE feed_leases SET expires_at = 0 WHERE feed = 'f00'")
        let takeover = try await feedsync(["pull", "--config", config, "--wait", "1"])
        #expect(takeover.status == 0, "\(takeover.stderr)")
    }

    @Test func theLivenessKeysAreReadAndChecked() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 30)
        let scratch = try Scratch()
        let good = try scratch.writePostgresConfig(database, baseURL: server.baseURL, storeKeys: """
            , "keepalives": true, "keepalivesIdle": "5s", "tcpUserTimeout": "5s", "statementTimeout": "5s", "lockTimeout": "2s"
            """)
        let pull = try await feedsync(["pull", "--config", good])
        #expect(pull.status == 0, "\(pull.stderr)")
        for (key, value, says) in [("statementTimeout", "\"soon\"", "is not a duration"), ("lockTimeout", "\"0s\"", "longer than zero"),
                                   ("tcpUserTimeout", "\"2h\"", "longer than the maximum"), ("keepalives", "\"yes\"", "keepalives")] {
            let bad = try scratch.writePostgresConfig(database, baseURL: server.baseURL, storeKeys: ", \"\(key)\": \(value)")
            let result = try await feedsync(["status", "--config", bad])
            #expect(result.status == 78 && result.stderr.contains(key) && result.stderr.contains(says), "\(key): \(result.stderr)")
        }
    }

    @Test func aReadOnlyRoleReadsTheMirrorButNoToken() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 120)
        let scratch = try Scratch()
        let config = try scratch.writePostgresConfig(database, baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)

        let token = try await psql(database, "SELECT access_token FROM feedsync_private.account_sessions WHERE account = 'demo'")
        #expect(token.count > 8, "the session was saved")
        // The grants docs/postgresql.md gives a reader.
        let reader = "reader_\(database.name)"
        try await psql(database, """
            CREATE ROLE \(reader);
            GRANT USAGE ON SCHEMA public TO \(reader);
            GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(reader);
            """)
        #expect(try await psql(database, "SET ROLE \(reader); SELECT count(*) FROM posts") == "120")
        await #expect(throws: (any Error).self) {
            try await psql(database, "SET ROLE \(reader); SELECT access_token FROM feedsync_private.account_sessions")
        }
        // Nothing the reader can read holds the token: a dump of the public schema does not.
        let dump = try await run(URL(fileURLWithPath: "/usr/bin/env"),
                                 ["pg_dump", "-h", database.socketFolder, "-U", "postgres", "-n", "public", database.name])
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(dump.stdout.contains("p0000001"))
        #expect(!dump.stdout.contains(token))
    }

    @Test func workersStartingTogetherMigrateOnce() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 50)
        let scratch = try Scratch()
        let config = try scratch.writePostgresConfig(database, baseURL: server.baseURL, feeds: 6)
        let results = try await withThrowingTaskGroup(of: Finished.self) { group in
            for index in 0..<6 {
                group.addTask { try await feedsync(["pull", "--config", config, "--feed", String(format: "f%02d", index)]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for result in results { #expect(result.status == 0, "\(result.stderr)") }
        #expect(try await psql(database, "SELECT string_agg(name, ',' ORDER BY name) FROM schema_migrations") == "001_schema,002_feeds_scheduled_by,003_sweep_withheld,004_account_sessions,005_video_stats_discovered_feeds,006_live_stream,007_live_state_profile_trigger,008_stars_serve_users,009_webhook_deliveries,010_media,011_serve_feed_tokens,012_retention_record,013_posts_listing,015_feed_versions,017_video_likes_author_media_files,020_feed_versions_per_statement,021_posts_author_keys_unchecked,022_posts_search_written,023_video_links_unchecked")
        #expect(try await psql(database, "SELECT count(DISTINCT feed), count(*) FROM posts") == "6|300")
    }

    @Test func aServerOverTheNetworkNeedsTLSAndThePasswordStaysOutOfTheURL() async throws {
        let scratch = try Scratch()
        func check(_ store: String) async throws -> Finished {
            let path = scratch.folder.appendingPathComponent("tls.json")
            try Data("""
                {"store": \(store),
                 "feeds": [{"name": "home", "posts": {"integration": "httpapi", "baseURL": "http://127.0.0.1:9",
                            "username": "demo", "passwordEnv": "FEEDSYNC_PASSWORD"}}]}
                """.utf8).write(to: path)
            return try await feedsync(["config", "check", "--config", path.path])
        }
        let plain = try await check(#"{"integration": "postgres", "url": "postgresql://feedsync@db.example/feedsync?sslmode=disable"}"#)
        #expect(plain.status == 78)
        #expect(plain.stderr.contains("sslmode=disable sends the mirror and its tokens unencrypted to db.example"), "\(plain.stderr)")
        let optedOut = try await check(#"{"integration": "postgres", "url": "postgresql://feedsync@db.example/feedsync?sslmode=disable", "requireTLS": false}"#)
        #expect(optedOut.status == 0, "\(optedOut.stderr)")
        let socket = try await check(#"{"integration": "postgres", "url": "postgresql:///feedsync?host=/run/postgresql&sslmode=disable"}"#)
        #expect(socket.status == 0, "a Unix socket needs no TLS: \(socket.stderr)")
        let secret = try await check(#"{"integration": "postgres", "url": "postgresql://feedsync:hunter2@db.example/feedsync"}"#)
        #expect(secret.status == 78)
        #expect(secret.stderr.contains("holds a password") && !secret.stderr.contains("hunter2"), "\(secret.stderr)")
    }

    /// The manual's table of the mirror's schema (docs/schema.md) holds for PostgreSQL too, with its own search:
    /// a `search` column on `posts` instead of the `posts_fts` table, and the daemon that
    /// scheduled each feed (several daemons share the store).
    @Test func theSchemaIsTheOneTheManualDocuments() async throws {
        let database = try await PostgresServer.makeDatabase()
        let server = try ReferenceServer(posts: 10)
        let scratch = try Scratch()
        #expect(try await feedsync(["pull", "--config", try scratch.writePostgresConfig(database, baseURL: server.baseURL)]).status == 0)
        let readme = try String(contentsOf: repository.appendingPathComponent("docs/schema.md"), encoding: .utf8)
        let table = readme.components(separatedBy: "<!-- schema:begin -->")[1].components(separatedBy: "<!-- schema:end -->")[0]
        var documented: [String: [String]] = [:]
        for line in table.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            documented[cells[0].trimmingCharacters(in: ["`"])] = cells[1].trimmingCharacters(in: ["`"])
                .components(separatedBy: ", ")
        }
        documented["posts_fts"] = nil
        documented["posts"]?.append("search")
        // The reader accounts live in the schema a read-only role is not granted, with the same columns.
        let privateTables = ["serve_users": ["name", "password_hash", "created_at"],
                             "serve_tokens": ["token_hash", "name", "created_at", "expires_at", "feed"]]
        // Added by PostgreSQL's migration 002, before 003 added sweep_withheld.
        if let at = documented["feeds"]?.firstIndex(of: "sweep_withheld") { documented["feeds"]?.insert("scheduled_by", at: at) }
        let rows = try await psql(database, """
            SELECT table_name || '|' || string_agg(column_name, ', ' ORDER BY ordinal_position) FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name <> 'feed_leases' GROUP BY table_name
            """)
        var actual: [String: [String]] = [:]
        for line in rows.split(separator: "\n") {
            let parts = line.split(separator: "|")
            actual[String(parts[0])] = String(parts[1]).components(separatedBy: ", ")
        }
        #expect(actual == documented)
        for (name, columns) in privateTables {
            let listed = try await psql(database, """
                SELECT string_agg(column_name, ', ' ORDER BY ordinal_position) FROM information_schema.columns
                WHERE table_schema = 'feedsync_private' AND table_name = '\(name)'
                """)
            #expect(listed.components(separatedBy: ", ") == columns, "feedsync_private.\(name)")
        }
    }
}
