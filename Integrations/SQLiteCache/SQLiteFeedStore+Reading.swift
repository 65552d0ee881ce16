import Core
import Foundation
import StoreKit

/// The read side: posts newest first, export pages in a stable order, and full-text search.
extension SQLiteFeedStore {
    static let postColumns = StoredPostColumns.select
    static let postJoins = StoredPostColumns.joins

    private func readPosts(matching query: PostQuery, in db: SQLiteDatabase) throws -> [StoredPost] {
        var stored: [StoredPost]
        if query.stable {
            let page = Self.stablePage(query)
            stored = try storedPosts(db.statement(page.sql), page.values)
        } else {
            let listing = Self.listing(query)
            stored = try storedPosts(db.statement("SELECT \(Self.postColumns) FROM posts p \(Self.postJoins) \(listing.sql)"), listing.values)
        }
        try attachVideos(to: &stored, in: db)
        return stored
    }

    /// One page of an export: one feed, newest first, ties by id. Each bound is written only
    /// when given, so the time index serves the range: `?4 IS NULL OR …` would make SQLite scan
    /// the feed for every page.
    static func stablePage(_ query: PostQuery) -> (sql: String, values: [SQLValue]) {
        let since = query.since.map(StoredTime.milliseconds)
        let after = query.after
        let bounds = (since == nil ? "" : " AND p.created_at >= ?2")
            + (after == nil ? "" : " AND p.created_at <= ?4 AND (p.created_at < ?4 OR p.id > ?5)")
        let sql = """
            SELECT \(postColumns) FROM posts p \(postJoins)
            WHERE p.feed = ?1 AND (?3 = 0 OR s.read_at IS NULL) AND (?7 = 0 OR s.starred_at IS NOT NULL)\(bounds)
            ORDER BY p.created_at DESC, p.id LIMIT ?6
            """
        return (sql, [.text(query.feed ?? ""), .integer(since), .integer(query.unreadOnly ? 1 : 0),
                      .integer(after.map { StoredTime.milliseconds($0.createdAt) }), .text(after?.id.rawValue),
                      .integer(query.limit), .integer(query.starredOnly ? 1 : 0)])
    }

    /// The listing's conditions, order and limit (after `FROM posts p` and its joins, which
    /// must include `post_state s`), and their values: one text for posts read whole and for
    /// their positions alone.
    private static func listing(_ query: PostQuery) -> (sql: String, values: [SQLValue]) {
        let since = query.since.map(StoredTime.milliseconds)
        let continuing = query.continuing
        // The feed and each bound are written only when given, so an index serves them: one
        // feed's time index, or across feeds the listing's own (`?1 IS NULL OR p.feed = ?1`
        // made SQLite scan and sort every post of the store for each page).
        // Oldest first is the listing's exact reverse, its bound too.
        let oldest = query.oldestFirst
        let bound = (query.feed == nil ? " AND ?1 IS NULL" : " AND p.feed = ?1")
            + (since == nil ? " AND ?2 IS NULL" : " AND p.created_at >= ?2")
            + (query.until == nil ? "" : " AND p.created_at <= ?9")
            + (continuing == nil ? ""
            : oldest ? " AND p.created_at >= ?6 AND (p.created_at > ?6 OR p.feed < ?7 OR (p.feed = ?7 AND p.id < ?8))"
            : " AND p.created_at <= ?6 AND (p.created_at < ?6 OR p.feed > ?7 OR (p.feed = ?7 AND p.id > ?8))")
        let sql = """
            WHERE (?3 = 0 OR s.read_at IS NULL) AND (?5 = 0 OR s.starred_at IS NOT NULL)\(bound)
            ORDER BY \(oldest ? "p.created_at, p.feed DESC, p.id DESC" : "p.created_at DESC, p.feed, p.id") LIMIT ?4
            """
        let values: [SQLValue] = [.text(query.feed), .integer(since), .integer(query.unreadOnly ? 1 : 0),
                                  .integer(query.limit), .integer(query.starredOnly ? 1 : 0)]
            + (continuing == nil && query.until == nil ? []
               : [.integer(continuing.map { StoredTime.milliseconds($0.createdAt) }), .text(continuing?.feed), .text(continuing?.id.rawValue)])
            + (query.until.map { [.integer(StoredTime.milliseconds($0))] } ?? [])
        return (sql, values)
    }

    /// The positions alone of the posts a listing query reads: time, feed and id from the
    /// listing's index (and the read and star marks for the filters), no text, no authors.
    public func positions(matching query: PostQuery) throws -> [StoredPost.ListingPosition] {
        guard !query.stable else { return try posts(matching: query).map(\.listingPosition) }
        let db = try db("reading post ids")
        let listing = Self.listing(query)
        return try storage("reading post ids") {
            try db.withReadTransaction {
                try db.statement("""
                    SELECT p.created_at, p.feed, p.id FROM posts p LEFT JOIN post_state s ON s.feed = p.feed AND s.post_id = p.id \(listing.sql)
                    """).query(listing.values) { row in
                    StoredPost.ListingPosition(createdAt: StoredTime.date(row.integer(0) ?? 0), feed: row.text(1) ?? "", id: PostID(row.text(2) ?? ""))
                }
            }
        }
    }

    /// Each feed's change counter (migration 021's triggers move it).
    public func feedVersions() throws -> [String: Int64]? {
        let db = try db("reading feed versions")
        return try storage("reading feed versions") {
            let rows = try db.statement("SELECT feed, version FROM feed_versions").query { row in (row.text(0) ?? "", row.integer(1) ?? 0) }
            return Dictionary(rows, uniquingKeysWith: max)
        }
    }

    public func posts(matching query: PostQuery) throws -> [StoredPost] {
        let db = try db("reading posts")
        // One read transaction for the page and its videos: each statement on its own would take
        // and drop SQLite's shared lock (two fcntl calls), once per post with a video.
        return try storage("reading posts") { try db.withReadTransaction { try readPosts(matching: query, in: db) } }
    }

    public func search(_ query: SearchQuery) throws -> [SearchHit] {
        let db = try db("searching posts")
        // Prepared apart: a failure here is the store's, never the query's.
        let statement = try storage("searching posts") {
            try db.statement("""
                SELECT \(Self.postColumns),
                       snippet(posts_fts, -1, char(57344), char(57345), '…', 16) AS snippet, bm25(posts_fts) AS search_rank
                FROM posts_fts JOIN posts p ON p.pk = posts_fts.rowid \(Self.postJoins)
                WHERE posts_fts MATCH ?1 AND (?2 IS NULL OR p.feed = ?2) AND (?3 IS NULL OR p.created_at >= ?3)
                ORDER BY bm25(posts_fts), p.created_at DESC, p.feed, p.id LIMIT ?4
                """)
        }
        do {
            var hits: [(StoredPost, String, Double)] = []
            try db.withReadTransaction {
                let layout = ColumnLayout(statement.columnNames)
                var reader = try storage("searching posts") { try StoredPostColumns(layout) }
                let snippet = try storage("searching posts") { try layout.position(of: "snippet") }
                let rank = try storage("searching posts") { try layout.position(of: "search_rank") }
                hits = try statement.query([.text(query.text), .text(query.feed), .integer(query.since.map(StoredTime.milliseconds)),
                                            .integer(query.limit)]) { row in
                    (reader.storedPost(row), row.text(snippet) ?? "", row.real(rank) ?? 0)
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

    /// The stored posts a statement selecting ``StoredPostColumns/select`` reads, each by column name.
    private func storedPosts(_ statement: SQLiteStatement, _ values: [SQLValue]) throws -> [StoredPost] {
        var reader = try StoredPostColumns(ColumnLayout(statement.columnNames))
        return try statement.query(values) { reader.storedPost($0) }
    }

    /// Fills in each post's resolved videos, in the post's order.
    private func attachVideos(to posts: inout [StoredPost], in db: SQLiteDatabase) throws {
        let videoQuery = try db.statement("""
            SELECT \(VideoColumns.names.joined(separator: ", ")) FROM videos WHERE feed = ? AND id = ? AND resolved = 1
            """)
        let positions = try VideoColumns.Positions(ColumnLayout(videoQuery.columnNames))
        for index in posts.indices where !posts[index].post.videoIDs.isEmpty {
            let feed = posts[index].feed
            posts[index].videos = try posts[index].post.videoIDs.flatMap { id in
                try videoQuery.query([.text(feed), .text(id.rawValue)]) { VideoColumns($0, at: positions).video }.compactMap { $0 }
            }
        }
    }
}
