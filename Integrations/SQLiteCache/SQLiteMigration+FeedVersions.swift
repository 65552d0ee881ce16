extension SQLiteMigration {
    /// Migration 021: each feed's change counter (``SQLiteFeedStore/feedVersions()``), moved by
    /// triggers, so no write path can forget it. An author's row is rewritten at every page
    /// that names them; only a change to what a feed shows of them moves the counter. A feed
    /// without a row has not changed since this migration: its version is 0.
    static let feedVersionsSQL = """
    CREATE TABLE feed_versions (feed TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TRIGGER feed_version_posts_insert AFTER INSERT ON posts BEGIN
        INSERT INTO feed_versions (feed, version) VALUES (NEW.feed, 1) ON CONFLICT (feed) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER feed_version_posts_update AFTER UPDATE ON posts BEGIN
        INSERT INTO feed_versions (feed, version) VALUES (NEW.feed, 1) ON CONFLICT (feed) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER feed_version_posts_delete AFTER DELETE ON posts BEGIN
        INSERT INTO feed_versions (feed, version) VALUES (OLD.feed, 1) ON CONFLICT (feed) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER feed_version_videos_insert AFTER INSERT ON videos BEGIN
        INSERT INTO feed_versions (feed, version) VALUES (NEW.feed, 1) ON CONFLICT (feed) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER feed_version_videos_update AFTER UPDATE ON videos BEGIN
        INSERT INTO feed_versions (feed, version) VALUES (NEW.feed, 1) ON CONFLICT (feed) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER feed_version_videos_delete AFTER DELETE ON videos BEGIN
        INSERT INTO feed_versions (feed, version) VALUES (OLD.feed, 1) ON CONFLICT (feed) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER feed_version_users_update AFTER UPDATE ON users
    WHEN OLD.handle IS NOT NEW.handle OR OLD.display_name IS NOT NEW.display_name OR OLD.avatar_url IS NOT NEW.avatar_url BEGIN
        INSERT INTO feed_versions (feed, version) VALUES (NEW.feed, 1) ON CONFLICT (feed) DO UPDATE SET version = version + 1;
    END;
    """
}
