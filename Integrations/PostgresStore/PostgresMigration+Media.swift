extension PostgresMigration {
    /// The media archive's tables (issue 37; `docs/media.md`, `docs/schema.md`): `media`, one row
    /// an address the posts point at, and `media_refs`, which post of which feed points at it.
    static let mediaSQL = """
            CREATE TABLE media (
                url TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                expected_type TEXT,
                expected_bytes BIGINT,
                digest TEXT,
                path TEXT,
                bytes BIGINT,
                media_type TEXT,
                fetched_at BIGINT,
                status TEXT NOT NULL,
                reason TEXT,
                attempts INTEGER NOT NULL,
                posted_at BIGINT NOT NULL,
                seen_at BIGINT NOT NULL
            );
            CREATE INDEX media_due ON media (status, posted_at);
            CREATE INDEX media_digest ON media (digest) WHERE digest IS NOT NULL;
            CREATE TABLE media_refs (
                feed TEXT NOT NULL,
                post_id TEXT NOT NULL,
                url TEXT NOT NULL,
                posted_at BIGINT NOT NULL,
                PRIMARY KEY (feed, post_id, url)
            );
            CREATE INDEX media_refs_by_url ON media_refs (url);
            """

    /// A video's likes and author (PeerTube's `likes`, YouTube oEmbed's `author_name`), and
    /// `media_files`: per post and per address, the remote URL beside the archive's file
    /// (`path`, relative to the media folder; `NULL` until fetched), for Datasette and `sqlite3`.
    static let videoLikesAuthorMediaFilesSQL = """
            ALTER TABLE videos ADD COLUMN like_count BIGINT;
            ALTER TABLE videos ADD COLUMN author TEXT;
            CREATE VIEW media_files AS
                SELECT r.feed, r.post_id, r.url, m.path, m.kind, m.status, m.bytes, m.media_type, m.fetched_at
                FROM media_refs r JOIN media m ON m.url = r.url;
            """
}
