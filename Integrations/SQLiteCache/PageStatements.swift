import Core
import StoreKit

/// The statements a page commit runs for each row. Parameter 1 is always the feed.
struct PageStatements {
    let insertPost, updatePost, upsertUser, insertVideoID, deletePost, deleteReposts: SQLiteStatement
    /// Adds the posts whose keys are in a JSON array (parameter 1) to the search index.
    let indexPosts: SQLiteStatement
    /// Adds the posts with keys from parameter 1 to parameter 2 to the search index.
    let indexPostRange: SQLiteStatement
    /// Links the new posts whose keys are in a JSON array (parameter 1), or from parameter 1 to
    /// parameter 2, to their videos.
    let linkPosts, linkPostRange: SQLiteStatement
    /// Moves the counter of feed ?1 by ?2, the number of posts it inserted.
    let countInserts: SQLiteStatement

    /// The post's own columns, parameters 2…24 in codec order, by name.
    private static let parameter = Dictionary(uniqueKeysWithValues: PostColumns.names.enumerated().map { ($1, "?\($0 + 2)") })

    // The author's key, handle and name (?25…?27) and the reposter's key (?28) are what the
    // page's author upserts returned (``upsertUser``). A key left NULL there (an author stored
    // exactly as the page has them, so nothing was written or returned) is found in users'
    // unique index by the post itself.
    private static let insertPost = """
        INSERT INTO posts (feed, \(PostColumns.names.joined(separator: ", ")), author_pk, author_handle, author_name, repost_by_pk)
        VALUES (?1, \(PostColumns.names.map { parameter[$0]! }.joined(separator: ", ")),
                coalesce(?25, (SELECT pk FROM users WHERE feed = ?1 AND id = \(parameter["author_id"]!))), ?26, ?27,
                coalesce(?28, (SELECT pk FROM users WHERE feed = ?1 AND id = \(parameter["repost_by"]!))))
        ON CONFLICT (feed, id) DO NOTHING
        """
    // All but the key may change; an update is rare enough for a lookup per column.
    private static let updatePost = """
        UPDATE posts SET \(PostColumns.changing.map { "\($0) = \(parameter[$0]!)" }.joined(separator: ", ")),
            author_pk = (SELECT u.pk FROM users u WHERE u.feed = ?1 AND u.id = \(parameter["author_id"]!)),
            author_handle = (SELECT u.handle FROM users u WHERE u.feed = ?1 AND u.id = \(parameter["author_id"]!)),
            author_name = (SELECT u.display_name FROM users u WHERE u.feed = ?1 AND u.id = \(parameter["author_id"]!)),
            repost_by_pk = (SELECT r.pk FROM users r WHERE r.feed = ?1 AND r.id = \(parameter["repost_by"]!))
        WHERE feed = ?1 AND id = ?2 AND (\(PostColumns.differ("posts", { parameter[$0]! }, in: .sqlite)))
        """
    // Writes the page's profile where it wins (``StoreSQL/profileWins``, as PostgreSQL's set
    // upsert does) and returns the author's key, handle, name and profile time as stored, for
    // their posts: the page's when it wrote them, the stored ones when those are newer (the row
    // is rewritten as it is, which writes no page, so that it is returned). An author stored
    // exactly as the page has them returns nothing.
    private static let upsertUser = """
        INSERT INTO users (feed, \(UserColumns.names.joined(separator: ", "))) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        ON CONFLICT (feed, id) DO UPDATE SET \(UserColumns.names.dropFirst().map { column in
            "\(column) = CASE WHEN \(SQLiteFeedStore.sql.profileWins) THEN excluded.\(column) ELSE users.\(column) END"
        }.joined(separator: ", "))
        WHERE \(SQLiteFeedStore.sql.profileWins) OR excluded.profile_at < users.profile_at
        RETURNING pk, handle, display_name, profile_at
        """

    init(_ db: SQLiteDatabase) throws {
        insertPost = try db.statement(Self.insertPost)
        updatePost = try db.statement(Self.updatePost)
        upsertUser = try db.statement(Self.upsertUser)
        insertVideoID = try db.statement("INSERT INTO videos (feed, id) VALUES (?1, ?2) ON CONFLICT (feed, id) DO NOTHING")
        deletePost = try db.statement("DELETE FROM posts WHERE feed = ?1 AND id = ?2")
        // The entries that repost a deleted post go with it (migration 012 indexes repost_of).
        deleteReposts = try db.statement("DELETE FROM posts WHERE feed = ?1 AND repost_of = ?2")
        indexPosts = try db.statement("""
            INSERT INTO posts_fts (rowid, text, title, content_warning, author_handle, author_name)
            SELECT pk, text, title, content_warning, author_handle, author_name FROM posts
            WHERE pk IN (SELECT value FROM json_each(?1))
            """)
        indexPostRange = try db.statement("""
            INSERT INTO posts_fts (rowid, text, title, content_warning, author_handle, author_name)
            SELECT pk, text, title, content_warning, author_handle, author_name FROM posts WHERE pk BETWEEN ?1 AND ?2
            """)
        linkPosts = try db.statement(Self.linkVideos(of: "p.pk IN (SELECT value FROM json_each(?1))"))
        linkPostRange = try db.statement(Self.linkVideos(of: "p.pk BETWEEN ?1 AND ?2"))
        countInserts = try db.statement("""
            INSERT INTO feed_versions (feed, version) VALUES (?1, ?2) ON CONFLICT (feed) DO UPDATE SET version = version + excluded.version
            """)
    }

    /// Links the posts that match `posts` (of `p`) to their videos, found by key one each
    /// (CROSS JOIN keeps the order written, as migration 027's update trigger does).
    static func linkVideos(of posts: String) -> String {
        """
        INSERT OR IGNORE INTO post_videos (post_pk, video_pk, position)
        SELECT p.pk, v.pk, j.key FROM posts p CROSS JOIN json_each(p.video_ids) j CROSS JOIN videos v ON v.feed = p.feed AND v.id = j.value
        WHERE \(posts) AND p.video_ids <> '[]'
        """
    }

    private var all: [SQLiteStatement] { [insertPost, updatePost, upsertUser, insertVideoID, deletePost, deleteReposts] }

    func bindFeed(_ feed: String) throws {
        for statement in all { try statement.bind(feed, at: 1) }
    }

    /// Run before the page's rows are unpinned: the statements bound their text in place.
    func clearBindings() {
        for statement in all { statement.clearBindings() }
    }
}
