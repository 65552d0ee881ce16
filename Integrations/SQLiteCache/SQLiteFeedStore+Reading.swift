import Core
import Foundation

/// The read side: posts newest first, export pages in a stable order, and full-text search.
extension SQLiteFeedStore {
    /// The columns every post read selects, in the order ``storedPost(_:)`` reads them.
    private static let postColumns = """
        p.feed, p.id, p.author_id, p.text, p.created_at, p.edited_at, p.reply_to,
        p.reply_count, p.repost_count, p.like_count, p.video_ids,
        u.handle, u.display_name, u.avatar_url, s.read_at,
        p.html, p.content_warning, p.language, p.visibility, p.repost_by, p.repost_of, p.attachments,
        r.handle, r.display_name, r.avatar_url,
        p.title, p.url, p.quote_of, p.quote_count, p.labels, p.repost_at
        """
    /// How many columns ``postColumns`` has; a query's own columns follow them.
    private static let postColumnCount: Int32 = 31

    private static let postJoins = """
        LEFT JOIN users u ON u.pk = p.author_pk
        LEFT JOIN users r ON r.pk = p.repost_by_pk
        LEFT JOIN post_state s ON s.feed = p.feed AND s.post_id = p.id
        """

    private func readPosts(matching query: PostQuery, in db: SQLiteDatabase) throws -> [StoredPost] {
        let since = query.since.map(millisecondsSince1970)
        var stored: [StoredPost]
        var users: UserCache? = UserCache()
        if query.stable {
            let after = query.after
            // One page of an export: one feed, newest first, ties by id. Each bound is written
            // only when given, so the time index serves the range: `?4 IS NULL OR …` would make
            // SQLite scan the feed for every page.
            let bounds = (since == nil ? "" : " AND p.created_at >= ?2")
                + (after == nil ? "" : " AND p.created_at <= ?4 AND (p.created_at < ?4 OR p.id > ?5)")
            stored = try db.statement("""
                SELECT \(Self.postColumns) FROM posts p \(Self.postJoins)
                WHERE p.feed = ?1 AND (?3 = 0 OR s.read_at IS NULL)\(bounds)
                ORDER BY p.created_at DESC, p.id LIMIT ?6
                """).query([.text(query.feed ?? ""), .integer(since), .integer(query.unreadOnly ? 1 : 0),
                            .integer(after.map { millisecondsSince1970($0.createdAt) }), .text(after?.id.rawValue),
                            .integer(query.limit)]) { try storedPost($0, users: &users) }
        } else {
            stored = try db.statement("""
                SELECT \(Self.postColumns) FROM posts p \(Self.postJoins)
                WHERE (?1 IS NULL OR p.feed = ?1) AND (?2 IS NULL OR p.created_at >= ?2) AND (?3 = 0 OR s.read_at IS NULL)
                ORDER BY p.created_at DESC, p.feed, p.id LIMIT ?4
                """).query([.text(query.feed), .integer(since), .integer(query.unreadOnly ? 1 : 0),
                            .integer(query.limit)]) { try storedPost($0, users: &users) }
        }
        try attachVideos(to: &stored, in: db)
        return stored
    }

    public func posts(matching query: PostQuery) throws -> [StoredPost] {
        let db = try db("reading posts")
        // One read transaction for the page and its videos: each statement on its own would take
        // and drop SQLite's shared lock (two fcntl calls), once per post with a video.
        return try storage("reading posts") { try db.withReadTransaction { try readPosts(matching: query, in: db) } }
    }

    public func feedNames() throws -> [String] {
        let db = try db("listing feeds")
        return try storage("listing feeds") {
            try db.statement("SELECT name FROM feeds UNION SELECT DISTINCT feed FROM posts ORDER BY 1").query { $0.string(0) ?? "" }
        }
    }

    public func search(_ query: SearchQuery) throws -> [SearchHit] {
        let db = try db("searching posts")
        // Prepared apart: a failure here is the store's, never the query's.
        let statement = try storage("searching posts") {
            try db.statement("""
                SELECT \(Self.postColumns),
                       snippet(posts_fts, -1, char(57344), char(57345), '…', 16), bm25(posts_fts)
                FROM posts_fts JOIN posts p ON p.pk = posts_fts.rowid \(Self.postJoins)
                WHERE posts_fts MATCH ?1 AND (?2 IS NULL OR p.feed = ?2) AND (?3 IS NULL OR p.created_at >= ?3)
                ORDER BY bm25(posts_fts), p.created_at DESC, p.feed, p.id LIMIT ?4
                """)
        }
        do {
            var hits: [(StoredPost, String, Double)] = []
            var users: UserCache?
            try db.withReadTransaction {
                hits = try statement.query([.text(query.text), .text(query.feed), .integer(query.since.map(millisecondsSince1970)),
                                            .integer(query.limit)]) { row in
                    (try storedPost(row, users: &users), row.string(Self.postColumnCount) ?? "", row.optionalDouble(Self.postColumnCount + 1) ?? 0)
                }
            }
            var stored = hits.map(\.0)
            try attachVideos(to: &stored, in: db)
            return zip(stored, hits).map { SearchHit(stored: $0, snippet: $1.1, rank: $1.2) }
        } catch let error as SQLiteError {
            if let reason = SearchSyntax.reason(for: error, query: query.text) {
                throw ServiceError(.invalidRequest, "searching for \(Terminal.safe(query.text, limit: 80))", reason)
            }
            throw ServiceError(.storage, "searching posts", error.description)
        }
    }

    /// A post read with ``postColumns``.
    /// The authors met in one read, by their columns: a page of an export has a few thousand
    /// posts by a few dozen people, and each avatar URL would otherwise be parsed per post.
    private typealias UserCache = [[String?]: User]

    private func user(_ row: UserRow, _ users: inout UserCache?) -> User {
        guard users != nil else { return User(row) }
        let key = [row.id, row.handle, row.displayName, row.avatarURL]
        if let known = users?[key] { return known }
        let user = User(row)
        users?[key] = user
        return user
    }

    private func storedPost(_ row: SQLiteStatement, users: inout UserCache?) throws -> StoredPost {
        let postRow = PostRow(id: row.string(1) ?? "", authorID: row.string(2) ?? "", text: row.string(3) ?? "",
                              createdAt: row.int64(4), editedAt: row.optionalInt64(5), replyTo: row.string(6),
                              replyCount: row.int64(7), repostCount: row.int64(8), likeCount: row.int64(9),
                              videoIDs: row.string(10) ?? "[]", html: row.string(15), contentWarning: row.string(16),
                              language: row.string(17), visibility: row.string(18), repostBy: row.string(19),
                              repostOf: row.string(20), attachments: row.string(21) ?? "[]",
                              title: row.string(25), url: row.string(26), quoteOf: row.string(27),
                              quoteCount: row.int64(28), labels: row.string(29) ?? "[]", repostAt: row.optionalInt64(30))
        let handle = row.string(11) ?? postRow.authorID
        let author = user(UserRow(id: postRow.authorID, handle: handle, displayName: row.string(12) ?? handle, avatarURL: row.string(13)),
                          &users)
        var booster: User?
        if let id = postRow.repostBy {
            let handle = row.string(22) ?? id
            booster = user(UserRow(id: id, handle: handle, displayName: row.string(23) ?? handle, avatarURL: row.string(24)), &users)
        }
        return StoredPost(feed: row.string(0) ?? "", post: Post(postRow, author: author, repostedBy: booster),
                          isRead: row.optionalInt64(14) != nil)
    }

    /// Fills in each post's resolved videos, in the post's order.
    private func attachVideos(to posts: inout [StoredPost], in db: SQLiteDatabase) throws {
        let videoQuery = try db.statement("""
            SELECT id, title, duration_ms, stream_url, thumbnail_url, size_bytes, width, height, fps
            FROM videos WHERE feed = ? AND id = ? AND resolved = 1
            """)
        for index in posts.indices where !posts[index].post.videoIDs.isEmpty {
            let feed = posts[index].feed
            posts[index].videos = try posts[index].post.videoIDs.flatMap { id in
                try videoQuery.query([.text(feed), .text(id.rawValue)]) { row in
                    Video(VideoRow(id: row.string(0) ?? "", title: row.string(1) ?? "", durationMs: row.int64(2),
                                   streamURL: row.string(3) ?? "", thumbnailURL: row.string(4), sizeBytes: row.optionalInt64(5),
                                   width: row.optionalInt64(6), height: row.optionalInt64(7), fps: row.optionalDouble(8)))
                }.compactMap { $0 }
            }
        }
    }
}
