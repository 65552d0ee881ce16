/// A named schema change, applied once and recorded in `schema_migrations`.
struct Migration: Sendable {
    let name: String
    let sql: String
    /// Work the SQL cannot do, run first in the migration's transaction.
    var prepare: (@Sendable (SQLiteDatabase, SessionFile) throws -> Void)? = nil

    /// Every migration in order. Append new ones; never edit one that has shipped.
    static let all: [Migration] = [
        Migration(name: "001_create_feed_tables", sql: """
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
        Migration(name: "002_daemon_state", sql: """
            ALTER TABLE feeds ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE feeds ADD COLUMN next_attempt_at INTEGER;
            CREATE TABLE daemon (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                pid INTEGER NOT NULL,
                started_at INTEGER NOT NULL,
                beat_at INTEGER NOT NULL
            );
            """),
        Migration(name: "003_sync_run_counts", sql: """
            ALTER TABLE sync_runs ADD COLUMN new_posts INTEGER;
            ALTER TABLE sync_runs ADD COLUMN updated_posts INTEGER;
            ALTER TABLE sync_runs ADD COLUMN deleted_posts INTEGER;
            ALTER TABLE sync_runs ADD COLUMN skipped_items INTEGER;
            ALTER TABLE sync_runs ADD COLUMN pages INTEGER;
            ALTER TABLE sync_runs ADD COLUMN requests INTEGER;
            ALTER TABLE sync_runs ADD COLUMN rows_written INTEGER;
            """),
        Migration(name: "004_rich_posts", sql: """
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

        Migration(name: "005_backend_identity_private_sessions", sql: """
            ALTER TABLE feeds ADD COLUMN backend TEXT;
            DROP TABLE sessions;
            """, prepare: moveSessionsOut),
        Migration(name: "006_titles_links_quotes_labels_fresh_authors", sql: """
            ALTER TABLE posts ADD COLUMN title TEXT;
            ALTER TABLE posts ADD COLUMN url TEXT;
            ALTER TABLE posts ADD COLUMN quote_of TEXT;
            ALTER TABLE posts ADD COLUMN quote_count INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE posts ADD COLUMN labels TEXT NOT NULL DEFAULT '[]';
            ALTER TABLE posts ADD COLUMN repost_at INTEGER;
            ALTER TABLE users ADD COLUMN profile_at INTEGER;
            """),
        Migration(name: "007_web_feed_polling", sql: """
            ALTER TABLE feeds ADD COLUMN location TEXT;
            ALTER TABLE feeds ADD COLUMN polling_stopped TEXT;
            """),
    ]

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
    static func pending(in database: SQLiteDatabase) throws -> [Migration] {
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
    @discardableResult
    static func migrate(_ database: SQLiteDatabase, sessions: SessionFile, now: Int64) throws -> Bool {
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
                try migration.prepare?(database, sessions)
                try database.execute(migration.sql)
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
