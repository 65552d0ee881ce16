import Core
import StoreKit

/// The statements a page commit runs for each row. Parameter 1 is always the feed.
struct PageStatements {
    let insertPost, updatePost, upsertUser, insertVideoID, deletePost, deleteReposts: SQLiteStatement
    /// Adds the posts whose keys are in a JSON array (parameter 1) to the search index.
    let indexPosts: SQLiteStatement
    /// Adds the posts with keys from parameter 1 to parameter 2 to the search index.
    let indexPostRange: SQLiteStatement

    /// The post's own columns, parameters 2…24 in codec order, by name.
    private static let parameter = Dictionary(uniqueKeysWithValues: PostColumns.names.enumerated().map { ($1, "?\($0 + 2)") })

    // The author's key, handle and name and the reposter's key come from the users rows the
    // page wrote just before, joined in the statement that writes the post (as PostgreSQL's
    // upsert joins them): a post links to its author, and the search index sees the profile as
    // stored, which a newer one stored before the page keeps.
    private static let insertPost = """
        INSERT INTO posts (feed, \(PostColumns.names.joined(separator: ", ")), author_pk, author_handle, author_name, repost_by_pk)
        SELECT ?1, \(PostColumns.names.map { parameter[$0]! }.joined(separator: ", ")), u.pk, u.handle, u.display_name, r.pk
        FROM (SELECT 1) LEFT JOIN users u ON u.feed = ?1 AND u.id = \(parameter["author_id"]!)
            LEFT JOIN users r ON r.feed = ?1 AND r.id = \(parameter["repost_by"]!)
        WHERE true ON CONFLICT (feed, id) DO NOTHING
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
    private static let upsertUser = """
        INSERT INTO users (feed, \(UserColumns.names.joined(separator: ", "))) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        \(SQLiteFeedStore.sql.userUpsert)
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
