extension SQLiteMigration {
    /// The media archive's tables (issue 37; `docs/media.md`, `docs/schema.md`): `media`, one row
    /// an address the posts point at, and `media_refs`, which post of which feed points at it.
    static let mediaSQL = """
            CREATE TABLE media (
                url TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                expected_type TEXT,
                expected_bytes INTEGER,
                digest TEXT,
                path TEXT,
                bytes INTEGER,
                media_type TEXT,
                fetched_at INTEGER,
                status TEXT NOT NULL,
                reason TEXT,
                attempts INTEGER NOT NULL,
                posted_at INTEGER NOT NULL,
                seen_at INTEGER NOT NULL
            );
            CREATE INDEX media_due ON media (status, posted_at);
            CREATE INDEX media_digest ON media (digest) WHERE digest IS NOT NULL;
            CREATE TABLE media_refs (
                feed TEXT NOT NULL,
                post_id TEXT NOT NULL,
                url TEXT NOT NULL,
                posted_at INTEGER NOT NULL,
                PRIMARY KEY (feed, post_id, url)
            );
            CREATE INDEX media_refs_by_url ON media_refs (url);
            """
}
