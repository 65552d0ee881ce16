import Foundation

/// The schema, as named migrations recorded in `schema_migrations`, applied under an advisory
/// lock so that workers starting together take turns.
///
/// Tables and columns mean what they mean in the SQLite store (times are milliseconds since
/// 1970), so the same queries read either. Search is a `tsvector` column instead of FTS5.
/// Sessions live in the schema `feedsync_private`, which a read-only role is not granted.
struct PostgresMigration {
    let name: String
    let sql: String

    /// Taken with `pg_advisory_xact_lock` around the migrations: "feedsync" as a number.
    static let lockKey = "7308056172364031089"

    static let all: [PostgresMigration] = [
        PostgresMigration(name: "001_schema", sql: """
            CREATE TABLE feeds (
                name TEXT PRIMARY KEY,
                cursor TEXT,
                cursor_validator TEXT,
                last_success_at BIGINT,
                last_error_at BIGINT,
                last_error TEXT,
                consecutive_failures INTEGER NOT NULL DEFAULT 0,
                next_attempt_at BIGINT,
                backend TEXT,
                location TEXT,
                polling_stopped TEXT
            );
            CREATE TABLE users (
                pk BIGSERIAL PRIMARY KEY,
                feed TEXT NOT NULL,
                id TEXT NOT NULL,
                handle TEXT NOT NULL,
                display_name TEXT NOT NULL,
                avatar_url TEXT,
                profile_at BIGINT,
                UNIQUE (feed, id)
            );
            CREATE TABLE posts (
                pk BIGSERIAL PRIMARY KEY,
                feed TEXT NOT NULL,
                id TEXT NOT NULL,
                author_pk BIGINT REFERENCES users (pk),
                author_id TEXT NOT NULL,
                author_handle TEXT,
                author_name TEXT,
                text TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                created TIMESTAMPTZ GENERATED ALWAYS AS (to_timestamp(created_at::double precision / 1000)) STORED,
                edited_at BIGINT,
                reply_to TEXT,
                reply_count BIGINT NOT NULL DEFAULT 0,
                repost_count BIGINT NOT NULL DEFAULT 0,
                like_count BIGINT NOT NULL DEFAULT 0,
                video_ids TEXT NOT NULL DEFAULT '[]',
                html TEXT,
                content_warning TEXT,
                language TEXT,
                visibility TEXT,
                repost_by TEXT,
                repost_by_pk BIGINT REFERENCES users (pk),
                repost_of TEXT,
                attachments TEXT NOT NULL DEFAULT '[]',
                title TEXT,
                url TEXT,
                quote_of TEXT,
                quote_count BIGINT NOT NULL DEFAULT 0,
                labels TEXT NOT NULL DEFAULT '[]',
                repost_at BIGINT,
                search TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple',
                    coalesce(text, '') || ' ' || coalesce(title, '') || ' ' || coalesce(content_warning, '') || ' '
                    || coalesce(author_handle, '') || ' ' || coalesce(author_name, ''))) STORED,
                UNIQUE (feed, id)
            );
            CREATE INDEX posts_by_time ON posts (feed, created_at DESC, id);
            CREATE INDEX posts_by_author ON posts (author_pk);
            CREATE INDEX posts_search ON posts USING GIN (search);
            CREATE TABLE videos (
                pk BIGSERIAL PRIMARY KEY,
                feed TEXT NOT NULL,
                id TEXT NOT NULL,
                resolved INTEGER NOT NULL DEFAULT 0,
                title TEXT,
                duration_ms BIGINT,
                stream_url TEXT,
                thumbnail_url TEXT,
                size_bytes BIGINT,
                width BIGINT,
                height BIGINT,
                fps DOUBLE PRECISION,
                UNIQUE (feed, id)
            );
            CREATE TABLE post_videos (
                post_pk BIGINT NOT NULL REFERENCES posts (pk) ON DELETE CASCADE,
                position INTEGER NOT NULL,
                video_pk BIGINT NOT NULL REFERENCES videos (pk),
                PRIMARY KEY (post_pk, position)
            );
            CREATE INDEX post_videos_by_video ON post_videos (video_pk);
            -- Kept from posts.video_ids by the store, one statement per page.
            CREATE TABLE post_state (
                feed TEXT NOT NULL,
                post_id TEXT NOT NULL,
                read_at BIGINT,
                PRIMARY KEY (feed, post_id)
            );
            CREATE TABLE sync_runs (
                id BIGSERIAL PRIMARY KEY,
                feed TEXT NOT NULL,
                started_at BIGINT NOT NULL,
                finished_at BIGINT NOT NULL,
                error TEXT,
                new_posts INTEGER,
                updated_posts INTEGER,
                deleted_posts INTEGER,
                skipped_items INTEGER,
                pages INTEGER,
                requests INTEGER,
                rows_written INTEGER
            );
            CREATE INDEX sync_runs_by_feed ON sync_runs (feed, started_at);
            CREATE TABLE daemon (
                instance TEXT PRIMARY KEY,
                host TEXT NOT NULL,
                pid INTEGER,
                started_at BIGINT NOT NULL,
                beat_at BIGINT NOT NULL
            );
            CREATE TABLE feed_leases (
                feed TEXT PRIMARY KEY,
                holder TEXT,
                instance TEXT,
                token TEXT,
                expires_at BIGINT
            );
            CREATE SCHEMA IF NOT EXISTS feedsync_private;
            REVOKE ALL ON SCHEMA feedsync_private FROM PUBLIC;
            CREATE TABLE feedsync_private.sessions (
                feed TEXT PRIMARY KEY,
                backend TEXT NOT NULL,
                access_token TEXT NOT NULL,
                refresh_token TEXT,
                expires_at BIGINT
            );
            """),
        // Which daemon recorded a feed's next attempt, so a daemon that stops clears only its own.
        PostgresMigration(name: "002_feeds_scheduled_by", sql: "ALTER TABLE feeds ADD COLUMN scheduled_by TEXT"),
        // Why the last walk from the start deleted nothing, for `feedsync status`.
        PostgresMigration(name: "003_sweep_withheld", sql: """
            ALTER TABLE feeds ADD COLUMN sweep_withheld TEXT;
            """),
        // Sessions belong to accounts; the per-feed table keeps what older versions saved until
        // each feed takes its own (``PostgresFeedStore/takeFormerSession(ofFeed:backend:)``).
        PostgresMigration(name: "004_account_sessions", sql: """
            CREATE TABLE feedsync_private.account_sessions (
                integration TEXT NOT NULL,
                server TEXT NOT NULL,
                account TEXT NOT NULL,
                access_token TEXT NOT NULL,
                refresh_token TEXT,
                expires_at BIGINT,
                PRIMARY KEY (integration, server, account)
            );
            """),
        // A video's view count and rating (YouTube's media:statistics and media:starRating), and
        // the page a web feed was discovered on, so `status` tells a discovery from a server's move.
        PostgresMigration(name: "005_video_stats_discovered_feeds", sql: """
            ALTER TABLE videos ADD COLUMN view_count BIGINT;
            ALTER TABLE videos ADD COLUMN rating DOUBLE PRECISION;
            ALTER TABLE feeds ADD COLUMN discovered_from TEXT;
            """),
        // A live stream's position (Jetstream's time_us), committed with the page it produced; and
        // the reposts of a post found by it, so deleting a post deletes them too.
        PostgresMigration(name: "006_live_stream", sql: """
            ALTER TABLE feeds ADD COLUMN stream_position TEXT;
            CREATE INDEX posts_reposts ON posts (feed, repost_of) WHERE repost_of IS NOT NULL;
            """),
        // How each streaming feed is followed, for `feedsync status`: earlier versions made the
        // table on first use, as here, so a store that has it already keeps it and its rows. And
        // a changed handle or name reaches the author's posts (their copies, and so their search)
        // in the statement that changed it, by the trigger SQLite's store has had since its
        // migration 008, with the same body.
        PostgresMigration(name: "007_live_state_profile_trigger", sql: """
            CREATE TABLE IF NOT EXISTS live_state (feed TEXT PRIMARY KEY, state TEXT NOT NULL, at BIGINT NOT NULL);
            CREATE FUNCTION users_au_profile() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE posts SET author_handle = new.handle, author_name = new.display_name WHERE author_pk = new.pk;
                RETURN NULL;
            END
            $$;
            CREATE TRIGGER users_au_profile AFTER UPDATE ON users FOR EACH ROW
            WHEN (old.handle IS DISTINCT FROM new.handle OR old.display_name IS DISTINCT FROM new.display_name)
            EXECUTE FUNCTION users_au_profile();
            """),
        // Stars beside read marks: local state that no sync touches (`feedsync star`, reader apps);
        // and the accounts of the reader listener (`feedsync serve-user`), shared by every daemon
        // of the store: an argon2id hash of each password and the SHA-256 of each token handed out
        // at login, never either secret, in the schema a read-only role is not granted. As
        // SQLite's store has had since its migration 014.
        PostgresMigration(name: "008_stars_serve_users", sql: """
            ALTER TABLE post_state ADD COLUMN starred_at BIGINT;
            CREATE INDEX post_state_starred ON post_state (feed, post_id) WHERE starred_at IS NOT NULL;
            CREATE TABLE feedsync_private.serve_users (name TEXT PRIMARY KEY, password_hash TEXT NOT NULL, created_at BIGINT NOT NULL);
            CREATE TABLE feedsync_private.serve_tokens (
                token_hash TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            );
            CREATE INDEX serve_tokens_by_name ON feedsync_private.serve_tokens (name);
            """),
        // Webhook deliveries waiting to be sent, as SQLite's 015 (008 is the reader API's).
        PostgresMigration(name: "009_webhook_deliveries", sql: """
            CREATE TABLE webhook_deliveries (
                id TEXT PRIMARY KEY,
                endpoint TEXT NOT NULL,
                body TEXT NOT NULL,
                attempts INTEGER NOT NULL,
                next_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL
            );
            CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at);
            """),
        // The media archive, as SQLite's 016 (numbered 010 as assigned).
        PostgresMigration(name: "010_media", sql: mediaSQL),
        // Feed tokens (`feedsync serve-user token`): a token row with a feed opens that served
        // feed only, never the API. Numbered 011: 010 is the media branch's.
        PostgresMigration(name: "011_serve_feed_tokens", sql: """
            ALTER TABLE feedsync_private.serve_tokens ADD COLUMN feed TEXT;
            """),
        // What retention removed from each feed, as SQLite's 018.
        PostgresMigration(name: "012_retention_record", sql: """
            ALTER TABLE feeds ADD COLUMN pruned_posts BIGINT NOT NULL DEFAULT 0, ADD COLUMN pruned_at BIGINT;
            """),
        // The reading list across feeds in its own order, as SQLite's 019.
        PostgresMigration(name: "013_posts_listing", sql: """
            CREATE INDEX posts_listing ON posts (created_at DESC, feed, id);
            """),
        // Each feed's change counter, moved by triggers in the writing transaction, as SQLite's 021.
        PostgresMigration(name: "015_feed_versions", sql: """
            CREATE TABLE feed_versions (feed TEXT PRIMARY KEY, version BIGINT NOT NULL);
            CREATE FUNCTION feed_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO feed_versions (feed, version) VALUES (CASE WHEN TG_OP = 'DELETE' THEN old.feed ELSE new.feed END, 1)
                ON CONFLICT (feed) DO UPDATE SET version = feed_versions.version + 1;
                RETURN NULL;
            END
            $$;
            CREATE TRIGGER feed_version_posts AFTER INSERT OR UPDATE OR DELETE ON posts FOR EACH ROW EXECUTE FUNCTION feed_versions_bump();
            CREATE TRIGGER feed_version_videos AFTER INSERT OR UPDATE OR DELETE ON videos FOR EACH ROW EXECUTE FUNCTION feed_versions_bump();
            CREATE TRIGGER feed_version_users AFTER UPDATE ON users FOR EACH ROW
            WHEN (old.handle IS DISTINCT FROM new.handle OR old.display_name IS DISTINCT FROM new.display_name
                  OR old.avatar_url IS DISTINCT FROM new.avatar_url)
            EXECUTE FUNCTION feed_versions_bump();
            """),
        // Videos' likes and author, and the media_files view, as SQLite's 023 (numbered 017 as assigned).
        PostgresMigration(name: "017_video_likes_author_media_files", sql: videoLikesAuthorMediaFilesSQL),
        // A feed's counter moved once per statement that changed its posts, not once per post
        // row: a page's upsert of 500 posts ran the row trigger 500 times, each an update of the
        // same feed_versions row in one transaction (a chain of 500 versions walked again by each
        // next one). bench_postgres_options.py's no-row-trigger variant: 8.7 s against 44.2 s for
        // a cold sync of 100,000 posts (issue 40). Every change still moves the counter, in the
        // writing transaction. Numbered 020 as assigned.
        PostgresMigration(name: "020_feed_versions_per_statement", sql: """
            CREATE FUNCTION feed_versions_bump_rows() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO feed_versions (feed, version) SELECT DISTINCT feed, 1 FROM changed_rows
                ON CONFLICT (feed) DO UPDATE SET version = feed_versions.version + 1;
                RETURN NULL;
            END
            $$;
            DROP TRIGGER feed_version_posts ON posts;
            CREATE TRIGGER feed_version_posts_inserted AFTER INSERT ON posts REFERENCING NEW TABLE AS changed_rows
                FOR EACH STATEMENT EXECUTE FUNCTION feed_versions_bump_rows();
            CREATE TRIGGER feed_version_posts_updated AFTER UPDATE ON posts REFERENCING NEW TABLE AS changed_rows
                FOR EACH STATEMENT EXECUTE FUNCTION feed_versions_bump_rows();
            CREATE TRIGGER feed_version_posts_deleted AFTER DELETE ON posts REFERENCING OLD TABLE AS changed_rows
                FOR EACH STATEMENT EXECUTE FUNCTION feed_versions_bump_rows();
            """),
        // Posts' author keys without the per-row foreign-key checks: each inserted post ran a
        // referential-integrity query against `users` (a row lock as well) for `author_pk` and
        // `repost_by_pk`, 7–24% of the server's CPU in a cold sync of 100,000 posts
        // (bench_postgres_options.py, no-fk beside baseline; issue 40). The keys stay whole without
        // them: the page's upsert takes them from `users` in the same statement, and a user row is
        // only ever deleted by a purge, which deletes the feed's posts first in its transaction —
        // as in SQLite's store, which has never enforced them (`foreign_keys` off).
        // PostgresAuthorKeysTests checks that every key still names its feed's user.
        PostgresMigration(name: "021_posts_author_keys_unchecked", sql: """
            ALTER TABLE posts DROP CONSTRAINT IF EXISTS posts_author_pk_fkey, DROP CONSTRAINT IF EXISTS posts_repost_by_pk_fkey;
            """),
        // `posts.search` written by the store instead of generated per row: the generated
        // column ran the server's text parser over every post inside the insert, the larger part
        // of a cold sync's search cost (issue 40). The page brings each post's own words as a
        // ready vector where it can vouch for them (PostgresSearchWords), and the upsert makes
        // the rest with the same expression (PostColumns.search); a renamed author's posts get
        // theirs from the trigger below, with the expression written out (a migration's text
        // never changes). The values already stored stay as they are (dropping
        // the expression rewrites nothing).
        PostgresMigration(name: "022_posts_search_written", sql: """
            ALTER TABLE posts ALTER COLUMN search DROP EXPRESSION;
            CREATE OR REPLACE FUNCTION users_au_profile() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE posts SET author_handle = new.handle, author_name = new.display_name,
                    search = to_tsvector('simple', coalesce(posts.text, '') || ' ' || coalesce(posts.title, '') || ' '
                        || coalesce(posts.content_warning, '') || ' ' || coalesce(new.handle, '') || ' ' || coalesce(new.display_name, ''))
                WHERE author_pk = new.pk;
                RETURN NULL;
            END
            $$;
            """),
        // A post's video links without the foreign keys' per-row checks: each link inserted
        // looked its post and its video up and locked both rows (a WAL record each), 10% of the
        // server's CPU in a cold sync of 100,000 posts with 20,000 links (issue 40). Links stay
        // whole without them: the page writes each link from its post's and video's keys in one
        // statement, a video is only deleted by a purge, after the feed's links and posts, and a
        // deleted post's links go with it in the same statement, by the trigger below, as the
        // cascade did (and as SQLite's `posts_ad` trigger does, whose foreign keys are off).
        PostgresMigration(name: "023_video_links_unchecked", sql: """
            ALTER TABLE post_videos DROP CONSTRAINT IF EXISTS post_videos_post_pk_fkey,
                DROP CONSTRAINT IF EXISTS post_videos_video_pk_fkey;
            CREATE FUNCTION posts_ad_video_links() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                DELETE FROM post_videos WHERE post_pk IN (SELECT pk FROM deleted_posts);
                RETURN NULL;
            END
            $$;
            CREATE TRIGGER posts_ad_video_links AFTER DELETE ON posts REFERENCING OLD TABLE AS deleted_posts
                FOR EACH STATEMENT EXECUTE FUNCTION posts_ad_video_links();
            """),
    ]

    /// Applies the migrations not yet recorded, each in its own transaction, under the lock.
    ///
    /// A migration may rewrite a large table, and a worker starting meanwhile waits for it: the
    /// store's statement and lock timeouts are lifted in this transaction, and the answer is
    /// awaited for up to ``migrationTimeout``.
    static func migrate(_ connection: PostgresConnection, now: Int64) throws {
        try connection.withAnswerTimeout(migrationTimeout) {
            try migrateUnderLock(connection, now: now)
        }
    }

    /// How long a worker waits for the migrations (its own, or another worker's it queues behind).
    static let migrationTimeout: TimeInterval = 900

    private static func migrateUnderLock(_ connection: PostgresConnection, now: Int64) throws {
        try connection.transaction {
            try connection.execute("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0")
            try connection.query("SELECT pg_advisory_xact_lock(\(lockKey))")
            try connection.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)")
            let applied = Set(try connection.query("SELECT name FROM schema_migrations").compactMap { $0[0] })
            for migration in all where !applied.contains(migration.name) {
                try connection.execute(migration.sql)
                try connection.query("INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)", [migration.name, "\(now)"])
            }
        }
    }
}
