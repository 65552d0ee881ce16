extension SQLiteMigration {
    /// Migration 008: integer keys for posts, users and videos, single-column foreign keys that
    /// Datasette follows, `post_videos`, and the `posts_fts` search table kept by triggers.
    static let datasetteLinksSearchSQL = """
            CREATE TABLE users_next (
                pk INTEGER PRIMARY KEY,
                feed TEXT NOT NULL,
                id TEXT NOT NULL,
                handle TEXT NOT NULL,
                display_name TEXT NOT NULL,
                avatar_url TEXT,
                profile_at INTEGER,
                UNIQUE (feed, id)
            );
            INSERT INTO users_next (feed, id, handle, display_name, avatar_url, profile_at)
                SELECT feed, id, handle, display_name, avatar_url, profile_at FROM users ORDER BY feed, id;
            DROP TABLE users;
            ALTER TABLE users_next RENAME TO users;

            CREATE TABLE videos_next (
                pk INTEGER PRIMARY KEY,
                feed TEXT NOT NULL,
                id TEXT NOT NULL,
                resolved INTEGER NOT NULL DEFAULT 0,
                title TEXT,
                duration_ms INTEGER,
                stream_url TEXT,
                thumbnail_url TEXT,
                size_bytes INTEGER,
                width INTEGER,
                height INTEGER,
                fps REAL,
                UNIQUE (feed, id)
            );
            INSERT INTO videos_next (feed, id, resolved, title, duration_ms, stream_url, thumbnail_url, size_bytes, width, height, fps)
                SELECT feed, id, resolved, title, duration_ms, stream_url, thumbnail_url, size_bytes, width, height, fps FROM videos ORDER BY feed, id;
            DROP TABLE videos;
            ALTER TABLE videos_next RENAME TO videos;
            CREATE INDEX videos_unresolved ON videos (feed) WHERE resolved = 0;

            CREATE TABLE posts_next (
                pk INTEGER PRIMARY KEY,
                feed TEXT NOT NULL,
                id TEXT NOT NULL,
                author_pk INTEGER REFERENCES users (pk),
                author_id TEXT NOT NULL,
                author_handle TEXT,
                author_name TEXT,
                text TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                created TEXT GENERATED ALWAYS AS (strftime('%Y-%m-%dT%H:%M:%SZ', created_at / 1000, 'unixepoch')) VIRTUAL,
                edited_at INTEGER,
                reply_to TEXT,
                reply_count INTEGER NOT NULL DEFAULT 0,
                repost_count INTEGER NOT NULL DEFAULT 0,
                like_count INTEGER NOT NULL DEFAULT 0,
                video_ids TEXT NOT NULL DEFAULT '[]',
                html TEXT,
                content_warning TEXT,
                language TEXT,
                visibility TEXT,
                repost_by TEXT,
                repost_by_pk INTEGER REFERENCES users (pk),
                repost_of TEXT,
                attachments TEXT NOT NULL DEFAULT '[]',
                title TEXT,
                url TEXT,
                quote_of TEXT,
                quote_count INTEGER NOT NULL DEFAULT 0,
                labels TEXT NOT NULL DEFAULT '[]',
                repost_at INTEGER,
                UNIQUE (feed, id)
            );
            INSERT INTO posts_next (feed, id, author_pk, author_id, author_handle, author_name, text, created_at, edited_at,
                                    reply_to, reply_count, repost_count, like_count, video_ids, html, content_warning, language,
                                    visibility, repost_by, repost_by_pk, repost_of, attachments, title, url, quote_of, quote_count,
                                    labels, repost_at)
                SELECT p.feed, p.id, u.pk, p.author_id, u.handle, u.display_name, p.text, p.created_at, p.edited_at,
                       p.reply_to, p.reply_count, p.repost_count, p.like_count, p.video_ids, p.html, p.content_warning, p.language,
                       p.visibility, p.repost_by, r.pk, p.repost_of, p.attachments, p.title, p.url, p.quote_of, p.quote_count,
                       p.labels, p.repost_at
                FROM posts p
                LEFT JOIN users u ON u.feed = p.feed AND u.id = p.author_id
                LEFT JOIN users r ON r.feed = p.feed AND r.id = p.repost_by
                ORDER BY p.feed, p.created_at, p.id;
            DROP TABLE posts;
            ALTER TABLE posts_next RENAME TO posts;
            CREATE INDEX posts_by_time ON posts (feed, created_at DESC);
            CREATE INDEX posts_by_author ON posts (author_pk);

            CREATE TABLE post_videos (
                post_pk INTEGER NOT NULL REFERENCES posts (pk),
                position INTEGER NOT NULL,
                video_pk INTEGER NOT NULL REFERENCES videos (pk),
                PRIMARY KEY (post_pk, position)
            ) WITHOUT ROWID;
            CREATE INDEX post_videos_by_video ON post_videos (video_pk);
            INSERT INTO post_videos (post_pk, video_pk, position)
                SELECT p.pk, v.pk, j.key FROM posts p, json_each(p.video_ids) j JOIN videos v ON v.feed = p.feed AND v.id = j.value
                WHERE p.video_ids <> '[]';

            CREATE VIRTUAL TABLE posts_fts USING fts5(text, title, content_warning, author_handle, author_name, content="posts", content_rowid="pk");
            INSERT INTO posts_fts (posts_fts) VALUES ('rebuild');

            -- New posts enter posts_fts in one statement per page, written by the store: FTS5 writes
            -- its pending terms out at the end of every statement, so a trigger per inserted row
            -- cost about five times the row itself.
            CREATE TRIGGER posts_ai AFTER INSERT ON posts WHEN new.video_ids <> '[]' BEGIN
                INSERT OR IGNORE INTO post_videos (post_pk, video_pk, position)
                    SELECT new.pk, v.pk, j.key FROM json_each(new.video_ids) j JOIN videos v ON v.feed = new.feed AND v.id = j.value;
            END;
            CREATE TRIGGER posts_ad AFTER DELETE ON posts BEGIN
                INSERT INTO posts_fts (posts_fts, rowid, text, title, content_warning, author_handle, author_name)
                    VALUES ('delete', old.pk, old.text, old.title, old.content_warning, old.author_handle, old.author_name);
                DELETE FROM post_videos WHERE post_pk = old.pk;
            END;
            CREATE TRIGGER posts_au_search AFTER UPDATE ON posts
            WHEN old.text IS NOT new.text OR old.title IS NOT new.title OR old.content_warning IS NOT new.content_warning
                OR old.author_handle IS NOT new.author_handle OR old.author_name IS NOT new.author_name BEGIN
                INSERT INTO posts_fts (posts_fts, rowid, text, title, content_warning, author_handle, author_name)
                    VALUES ('delete', old.pk, old.text, old.title, old.content_warning, old.author_handle, old.author_name);
                INSERT INTO posts_fts (rowid, text, title, content_warning, author_handle, author_name)
                    VALUES (new.pk, new.text, new.title, new.content_warning, new.author_handle, new.author_name);
            END;
            CREATE TRIGGER posts_au_videos AFTER UPDATE ON posts WHEN old.video_ids IS NOT new.video_ids BEGIN
                DELETE FROM post_videos WHERE post_pk = old.pk;
                INSERT OR IGNORE INTO post_videos (post_pk, video_pk, position)
                    SELECT new.pk, v.pk, j.key FROM json_each(new.video_ids) j JOIN videos v ON v.feed = new.feed AND v.id = j.value;
            END;
            CREATE TRIGGER users_au_profile AFTER UPDATE ON users
            WHEN old.handle IS NOT new.handle OR old.display_name IS NOT new.display_name BEGIN
                UPDATE posts SET author_handle = new.handle, author_name = new.display_name WHERE author_pk = new.pk;
            END;
            """

    /// Migration 027: the triggers that link a post to its videos read the post's list of ids
    /// first and find each video by its key, whatever the number of the feed's videos.
    static let videoLinksByKeySQL = """
            DROP TRIGGER posts_ai;
            CREATE TRIGGER posts_ai AFTER INSERT ON posts WHEN new.video_ids <> '[]' BEGIN
                INSERT OR IGNORE INTO post_videos (post_pk, video_pk, position)
                    SELECT new.pk, v.pk, j.key FROM json_each(new.video_ids) j CROSS JOIN videos v ON v.feed = new.feed AND v.id = j.value;
            END;
            DROP TRIGGER posts_au_videos;
            CREATE TRIGGER posts_au_videos AFTER UPDATE ON posts WHEN old.video_ids IS NOT new.video_ids BEGIN
                DELETE FROM post_videos WHERE post_pk = old.pk;
                INSERT OR IGNORE INTO post_videos (post_pk, video_pk, position)
                    SELECT new.pk, v.pk, j.key FROM json_each(new.video_ids) j CROSS JOIN videos v ON v.feed = new.feed AND v.id = j.value;
            END;
            """
}
