import Core
import StoreKit

/// The statements a page commit runs for each row. Parameter 1 is always the feed.
struct PageStatements {
    let insertPost, updatePost, upsertUser, selectUser, insertVideoID, deletePost, deleteReposts: SQLiteStatement
    /// Adds the posts whose keys are in a JSON array (parameter 1) to the search index.
    let indexPosts: SQLiteStatement
    /// Adds the posts with keys from parameter 1 to parameter 2 to the search index.
    let indexPostRange: SQLiteStatement

    init(_ db: SQLiteDatabase) throws {
        // The author's key, handle and name (?25…?27) and the reposter's key (?28) come from
        // the users rows written just before, so a post links to its author and the search
        // index sees the author's current profile.
        insertPost = try db.statement("""
            INSERT INTO posts (feed, \(PostColumns.names.joined(separator: ", ")),
                               author_pk, author_handle, author_name, repost_by_pk)
            VALUES (\((1 ... PageRows.postWidth + 5).map { "?\($0)" }.joined(separator: ", ")))
            ON CONFLICT (feed, id) DO NOTHING
            """)
        // The post's own columns are parameters 2…24 in codec order; all but the key may change.
        let changing = PostColumns.names.enumerated().dropFirst().map { (name: $1, parameter: "?\($0 + 2)") }
        let parameter = Dictionary(uniqueKeysWithValues: changing.map { ($0.name, $0.parameter) })
        let author = parameter["author_id"]!, reposter = parameter["repost_by"]!
        updatePost = try db.statement("""
            UPDATE posts SET \(changing.map { "\($0.name) = \($0.parameter)" }.joined(separator: ", ")),
                author_pk = (SELECT u.pk FROM users u WHERE u.feed = ?1 AND u.id = \(author)),
                author_handle = (SELECT u.handle FROM users u WHERE u.feed = ?1 AND u.id = \(author)),
                author_name = (SELECT u.display_name FROM users u WHERE u.feed = ?1 AND u.id = \(author)),
                repost_by_pk = (SELECT r.pk FROM users r WHERE r.feed = ?1 AND r.id = \(reposter))
            WHERE feed = ?1 AND id = ?2 AND (\(changing.map { "\($0.name) IS NOT \($0.parameter)" }.joined(separator: " OR ")))
            """)
        // A profile replaces the stored one only if the post that carried it is at least as
        // new as the one that set it, whatever order pages commit in (a backfill commits
        // newest first). A newer post with the same profile only moves `profile_at`.
        upsertUser = try db.statement("""
            INSERT INTO users (feed, id, handle, display_name, avatar_url, profile_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (feed, id) DO UPDATE SET handle = ?3, display_name = ?4, avatar_url = ?5, profile_at = ?6
            WHERE ?6 >= coalesce(users.profile_at, ?6) AND (?6 > coalesce(users.profile_at, ?6)
                OR users.handle IS NOT ?3 OR users.display_name IS NOT ?4 OR users.avatar_url IS NOT ?5)
            """)
        selectUser = try db.statement("SELECT pk, handle, display_name FROM users WHERE feed = ?1 AND id = ?2")
        insertVideoID = try db.statement("INSERT INTO videos (feed, id) VALUES (?1, ?2) ON CONFLICT (feed, id) DO NOTHING")
        deletePost = try db.statement("DELETE FROM posts WHERE feed = ?1 AND id = ?2")
        // Migration 012 indexes repost_of.
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

    private var all: [SQLiteStatement] { [insertPost, updatePost, upsertUser, selectUser, insertVideoID, deletePost, deleteReposts] }

    func bindFeed(_ feed: String) throws {
        for statement in all { try statement.bind(feed, at: 1) }
    }

    /// Run before the page's rows are unpinned: the statements bound their text in place.
    func clearBindings() {
        for statement in all { statement.clearBindings() }
    }
}
