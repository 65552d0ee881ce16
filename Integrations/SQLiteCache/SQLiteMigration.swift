import Core
import Foundation
import StoreKit

/// A named schema change, applied once and recorded in `schema_migrations`.
struct SQLiteMigration: Sendable {
    let name: String
    let sql: String
    /// Work the SQL cannot do, run first in the migration's transaction.
    var prepare: (@Sendable (SQLiteDatabase, SessionFile) throws -> Void)? = nil
    /// Work done in the private sessions file first (rows moved out of the mirror), committed
    /// there before the migration's own transaction.
    var moveOut: (@Sendable (SQLiteDatabase, SessionDatabase) throws -> Void)? = nil
    /// What the migration does, for a store that holds posts already: it may take a while.
    var announcement: String? = nil

    /// Every migration in order. Append new ones; never edit one that has shipped.
    static let all: [SQLiteMigration] = [
        SQLiteMigration(name: "001_create_feed_tables", sql: """
            CREATE TABLE feeds (
                name TEXT PRIMARY KEY,
                cursor TEXT,
                cursor_validator TEXT,
                last_success_at INTEGER,
                last_error_at INTEGER,
                last_error TEXT
            );
            CREATE TABLE users (
                feed TEXT NOT NULL,
                id TEXT NOT NULL,
                handle TEXT NOT NULL,
                display_name TEXT NOT NULL,
                avatar_url TEXT,
                PRIMARY KEY (feed, id)
            ) WITHOUT ROWID;
            CREATE TABLE posts (
                feed TEXT NOT NULL,
                id TEXT NOT NULL,
                author_id TEXT NOT NULL,
                text TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                edited_at INTEGER,
                reply_to TEXT,
                reply_count INTEGER NOT NULL DEFAULT 0,
                repost_count INTEGER NOT NULL DEFAULT 0,
                like_count INTEGER NOT NULL DEFAULT 0,
                video_ids TEXT NOT NULL DEFAULT '[]',
                PRIMARY KEY (feed, id)
            ) WITHOUT ROWID;
            CREATE INDEX posts_by_time ON posts (feed, created_at DESC);
            CREATE TABLE videos (
                feed TEXT NOT NULL,
                id TEXT NOT NULL,
                resolved INTEGER NOT NULL DEFAULT 0,
                title TEXT,
                duration_ms INTEGER,
                stream_url TEXT,
                thumbnail_url TEXT,
                size_bytes INTEGER,
                PRIMARY KEY (feed, id)
            ) WITHOUT ROWID;
            CREATE INDEX videos_unresolved ON videos (feed) WHERE resolved = 0;
            CREATE TABLE post_state (
                feed TEXT NOT NULL,
                post_id TEXT NOT NULL,
                read_at INTEGER,
                PRIMARY KEY (feed, post_id)
            ) WITHOUT ROWID;
            CREATE TABLE sessions (
                feed TEXT PRIMARY KEY,
                access_token TEXT NOT NULL,
                refresh_token TEXT,
                expires_at INTEGER
            );
            CREATE TABLE sync_runs (
                id INTEGER PRIMARY KEY,
                feed TEXT NOT NULL,
                started_at INTEGER NOT NULL,
                finished_at INTEGER NOT NULL,
                error TEXT
            );
            """),
        SQLiteMigration(name: "002_daemon_state", sql: """
            ALTER TABLE feeds ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE feeds ADD COLUMN next_attempt_at INTEGER;
            CREATE TABLE daemon (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                pid INTEGER NOT NULL,
                started_at INTEGER NOT NULL,
                beat_at INTEGER NOT NULL
            );
            """),
        SQLiteMigration(name: "003_sync_run_counts", sql: """
            ALTER TABLE sync_runs ADD COLUMN new_posts INTEGER;
            ALTER TABLE sync_runs ADD COLUMN updated_posts INTEGER;
            ALTER TABLE sync_runs ADD COLUMN deleted_posts INTEGER;
            ALTER TABLE sync_runs ADD COLUMN skipped_items INTEGER;
            ALTER TABLE sync_runs ADD COLUMN pages INTEGER;
            ALTER TABLE sync_runs ADD COLUMN requests INTEGER;
            ALTER TABLE sync_runs ADD COLUMN rows_written INTEGER;
            """),
        SQLiteMigration(name: "004_rich_posts", sql: """
            ALTER TABLE posts ADD COLUMN html TEXT;
            ALTER TABLE posts ADD COLUMN content_warning TEXT;
            ALTER TABLE posts ADD COLUMN language TEXT;
            ALTER TABLE posts ADD COLUMN visibility TEXT;
            ALTER TABLE posts ADD COLUMN repost_by TEXT;
            ALTER TABLE posts ADD COLUMN repost_of TEXT;
            ALTER TABLE posts ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';
            ALTER TABLE videos ADD COLUMN width INTEGER;
            ALTER TABLE videos ADD COLUMN height INTEGER;
            ALTER TABLE videos ADD COLUMN fps REAL;
            """),

        SQLiteMigration(name: "005_backend_identity_private_sessions", sql: """
            ALTER TABLE feeds ADD COLUMN backend TEXT;
            DROP TABLE sessions;
            """, prepare: moveSessionsOut),
        SQLiteMigration(name: "006_titles_links_quotes_labels_fresh_authors", sql: """
            ALTER TABLE posts ADD COLUMN title TEXT;
            ALTER TABLE posts ADD COLUMN url TEXT;
            ALTER TABLE posts ADD COLUMN quote_of TEXT;
            ALTER TABLE posts ADD COLUMN quote_count INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE posts ADD COLUMN labels TEXT NOT NULL DEFAULT '[]';
            ALTER TABLE posts ADD COLUMN repost_at INTEGER;
            ALTER TABLE users ADD COLUMN profile_at INTEGER;
            """),
        SQLiteMigration(name: "007_web_feed_polling", sql: """
            ALTER TABLE feeds ADD COLUMN location TEXT;
            ALTER TABLE feeds ADD COLUMN polling_stopped TEXT;
            """),
        // Datasette (and other tools) follow single-column foreign keys and search through an
        // FTS table whose content is the table: posts, users and videos get integer keys,
        // posts link to their authors and, through post_videos, to their videos, and posts_fts
        // indexes the text, kept by triggers in the same transaction as each change.
        SQLiteMigration(name: "008_datasette_links_search", sql: datasetteLinksSearchSQL,
                        announcement: "building the search index and linked tables"),
        // One row per running daemon, keyed by its instance, so a store that several daemons
        // share (PostgreSQL) and this one record daemons the same way.
        SQLiteMigration(name: "009_daemon_instances", sql: """
            DROP TABLE daemon;
            CREATE TABLE daemon (
                instance TEXT PRIMARY KEY,
                host TEXT NOT NULL,
                pid INTEGER,
                started_at INTEGER NOT NULL,
                beat_at INTEGER NOT NULL
            );
            """),
        // Why the last walk from the start deleted nothing, for `feedsync status`.
        SQLiteMigration(name: "010_sweep_withheld", sql: """
            ALTER TABLE feeds ADD COLUMN sweep_withheld TEXT;
            """),
        // A video's view count and rating (YouTube's media:statistics and media:starRating), and
        // the page a web feed was discovered on, so `status` tells a discovery from a server's move.
        SQLiteMigration(name: "011_video_stats_discovered_feeds", sql: """
            ALTER TABLE videos ADD COLUMN view_count INTEGER;
            ALTER TABLE videos ADD COLUMN rating REAL;
            ALTER TABLE feeds ADD COLUMN discovered_from TEXT;
            """),
        // A live stream's position (Jetstream's time_us), committed with the page it produced; and
        // the reposts of a post found by it, so deleting a post deletes them too.
        SQLiteMigration(name: "012_live_stream", sql: """
            ALTER TABLE feeds ADD COLUMN stream_position TEXT;
            CREATE INDEX posts_reposts ON posts (feed, repost_of) WHERE repost_of IS NOT NULL;
            """),
        // How each streaming feed is followed, for `feedsync status`. Earlier versions made the
        // table on first use, as here, so a store that has it already keeps it and its rows.
        SQLiteMigration(name: "013_live_state", sql: """
            CREATE TABLE IF NOT EXISTS live_state (feed TEXT PRIMARY KEY, state TEXT NOT NULL, at INTEGER NOT NULL);
            """),
        // Stars beside read marks: local state that no sync touches (`feedsync star`, reader apps);
        // and the accounts of the reader listener (`feedsync serve-user`): an argon2id hash of
        // each password, and the SHA-256 of each token handed out at login, never either secret.
        SQLiteMigration(name: "014_stars_serve_users", sql: """
            ALTER TABLE post_state ADD COLUMN starred_at INTEGER;
            CREATE INDEX post_state_starred ON post_state (feed, post_id) WHERE starred_at IS NOT NULL;
            CREATE TABLE serve_users (name TEXT PRIMARY KEY, password_hash TEXT NOT NULL, created_at INTEGER NOT NULL);
            CREATE TABLE serve_tokens (
                token_hash TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX serve_tokens_by_name ON serve_tokens (name);
            """),
        // Webhook deliveries waiting to be sent (issue 38): queued with the store, so a restart
        // loses none. Numbered 015: 014 is the reader API's (branch reader36).
        SQLiteMigration(name: "015_webhook_deliveries", sql: """
            CREATE TABLE webhook_deliveries (
                id TEXT PRIMARY KEY,
                endpoint TEXT NOT NULL,
                body TEXT NOT NULL,
                attempts INTEGER NOT NULL,
                next_at INTEGER NOT NULL,
                created_at INTEGER NOT NULL
            );
            CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at);
            """),
        // The media archive (issue 37): one row an address the posts point at, with the digest of
        // its file once fetched (`path` is that file inside the archive folder, for Datasette),
        // and which post of which feed refers to it. A reference outlives its post's deletion at
        // the source; it goes with a retention removal or a purge. Numbered 016 as assigned.
        SQLiteMigration(name: "016_media", sql: mediaSQL),
        // The reader accounts leave the mirror people publish (Datasette, a copied file) for the
        // private sessions file: their rows are copied there first (committed, FULL), then the
        // tables dropped here, with secure_delete on. 016 is the media branch's.
        SQLiteMigration(name: "017_serve_users_private", sql: """
            DROP TABLE serve_tokens;
            DROP TABLE serve_users;
            """, moveOut: moveReaderAccountsOut),
        // What retention removed from each feed, for `status` (issue 38): how many, and when last.
        SQLiteMigration(name: "018_retention_record", sql: """
            ALTER TABLE feeds ADD COLUMN pruned_posts INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE feeds ADD COLUMN pruned_at INTEGER;
            """),
        // The listing's order across feeds (read backward for oldest first): a reader app's page sorted every post without it.
        SQLiteMigration(name: "019_posts_listing", sql: "CREATE INDEX posts_listing ON posts (created_at DESC, feed, id);"),
        // A served feed's validator (its ETag) without reading its posts: every change to what a
        // served feed shows (a post or video written, changed or deleted, an author renamed)
        // moves the feed's counter, in the writing transaction, whatever path writes it.
        SQLiteMigration(name: "021_feed_versions", sql: feedVersionsSQL),
        // Videos' likes and author, and the media_files view (issue 37). Numbered 023 as assigned.
        SQLiteMigration(name: "023_video_likes_author_media_files", sql: videoLikesAuthorMediaFilesSQL),
        // A feed's posts newest first with ties by id, from the index alone, as PostgreSQL's
        // index has them: without the id SQLite sorted every page's rows again by it (a third
        // of an export's SQLite time, issue 40). Numbered 026 as assigned.
        SQLiteMigration(name: "026_posts_by_time_id", sql: """
            DROP INDEX posts_by_time;
            CREATE INDEX posts_by_time ON posts (feed, created_at DESC, id);
            """),
        // A post's videos are looked up by key, one each: SQLite had put the feed's videos
        // outside the post's list of ids, so every post with a video read all of its feed's
        // videos (20,000 Bluesky posts with 1,307 videos: half the time of their commit, and
        // more with every video stored). CROSS JOIN keeps the tables in the order written.
        SQLiteMigration(name: "027_video_links_by_key", sql: videoLinksByKeySQL),
        // New posts are linked to their videos and counted in their feed's version by the store,
        // one statement each for a transaction's new posts (NewPosts), as they already entered the
        // search index (026). Any trigger on a post's insert made every insert keep a statement
        // journal, and end it with a sync of the search index: a quarter of SQLite's time for a
        // post (20,000 Mastodon statuses, SQLite alone: 0.58–0.59 s of CPU with the triggers,
        // 0.37–0.49 s without, issue 40). Changes and deletions keep their triggers.
        SQLiteMigration(name: "028_store_links_new_posts", sql: """
            DROP TRIGGER posts_ai;
            DROP TRIGGER feed_version_posts_insert;
            """),
    ]

    /// Copies the reader accounts and their tokens into the sessions file (a copy there wins).
    private static func moveReaderAccountsOut(_ database: SQLiteDatabase, to accounts: SessionDatabase) throws {
        let users = try database.statement("SELECT name, password_hash, created_at FROM serve_users").query { row in
            [SQLValue.text(row.string(0) ?? ""), .text(row.string(1) ?? ""), .integer(row.int64(2))]
        }
        let tokens = try database.statement("SELECT token_hash, name, created_at, expires_at FROM serve_tokens").query { row in
            [SQLValue.text(row.string(0) ?? ""), .text(row.string(1) ?? ""), .integer(row.int64(2)), .integer(row.int64(3))]
        }
        guard !users.isEmpty || !tokens.isEmpty else { return }
        try accounts.withAccounts("moving the reader accounts into the sessions file", writing: true) { db in
            let user = try db.statement("INSERT OR IGNORE INTO serve_users (name, password_hash, created_at) VALUES (?1, ?2, ?3)")
            for row in users { try user.run(row) }
            let token = try db.statement("INSERT OR IGNORE INTO serve_tokens (token_hash, name, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)")
            for row in tokens { try token.run(row) }
        }
    }

    /// Moves the tokens of the `sessions` table into the private sessions file, before the
    /// table is dropped (with `secure_delete` on, so no token stays in a free page).
    private static func moveSessionsOut(_ database: SQLiteDatabase, to file: SessionFile) throws {
        let rows = try database.statement("SELECT feed, access_token, refresh_token, expires_at FROM sessions").query { row in
            (row.string(0) ?? "", SessionFile.Entry(backend: "", accessToken: row.string(1) ?? "", refreshToken: row.string(2),
                                                    expiresAt: row.optionalInt64(3)))
        }
        guard !rows.isEmpty else { return }
        var entries = try file.read()
        for (feed, entry) in rows where entries[feed] == nil { entries[feed] = entry }
        try file.write(entries)
    }

    /// The migrations not yet recorded, by name.
    static func pending(in database: SQLiteDatabase) throws -> [SQLiteMigration] {
        let exists = try database.statement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").query { _ in true }
        guard !exists.isEmpty else { return all }
        let applied = Set(try database.statement("SELECT name FROM schema_migrations").query { $0.string(0) ?? "" })
        return all.filter { !applied.contains($0.name) }
    }

    /// Applies every migration not yet recorded, each in its own write transaction.
    ///
    /// Several processes may open a new file at once: each migration re-checks, under
    /// SQLite's write lock, whether another process applied it meanwhile (as GRDB's
    /// `DatabaseMigrator` does), so none applies one twice.
    ///
    /// - Returns: whether any migration ran here.
    /// - Parameter log: told, as notices naming `store`, before and after a migration that
    ///   rebuilds posts, with their count.
    @discardableResult
    static func migrate(_ database: SQLiteDatabase, sessions: SessionFile, accounts: SessionDatabase, now: Int64,
                        log: Logger = .disabled, store: String = "") throws -> Bool {
        func notice(_ what: String) { log.notice("upgrading the store \(store): \(what)") }
        guard try !pending(in: database).isEmpty else { return false }
        // Freed pages are zeroed, so a dropped table's tokens do not linger in the file.
        try database.execute("PRAGMA secure_delete = ON")
        defer { try? database.execute("PRAGMA secure_delete = OFF") }
        var ran = false
        for migration in all {
            try database.withTransaction {
                try database.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
                let applied = try database.statement("SELECT 1 FROM schema_migrations WHERE name = ?").query([.text(migration.name)]) { _ in true }
                guard applied.isEmpty else { return }
                let started = Date()
                var posts = 0
                if let announcement = migration.announcement {
                    posts = try database.statement("SELECT COUNT(*) FROM posts").query { Int($0.int64(0)) }.first ?? 0
                    if posts > 0 { notice("\(announcement) for \(posts) post\(posts == 1 ? "" : "s")…") }
                }
                try migration.prepare?(database, sessions)
                try migration.moveOut?(database, accounts)
                try database.execute(migration.sql)
                if posts > 0 { notice("done in \(String(format: "%.1f", Date().timeIntervalSince(started))) s") }
                try database.statement("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)")
                    .run([.text(migration.name), .integer(now)])
                ran = true
            }
        }
        // Old WAL frames may still hold the pages as they were before; start the WAL afresh.
        if ran { try database.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        return ran
    }
}
