import Core
import Foundation
import StoreKit

/// The read side: posts newest first (or oldest), export pages in a stable order, and full-text search (a `tsvector`).
extension PostgresFeedStore: FeedReader {
    private static let postColumns = StoredPostColumns.select
    private static let postJoins = StoredPostColumns.joins

    public func posts(matching query: PostQuery) throws -> [StoredPost] {
        let since = query.since.map { "\(StoredTime.milliseconds($0))" }
        let table: PostgresTable
        if query.stable {
            let after = query.after
            table = try runTable("reading posts", """
                SELECT \(Self.postColumns) FROM posts p \(Self.postJoins)
                WHERE p.feed = $1 AND ($2::bigint IS NULL OR p.created_at >= $2)
                    AND ($3::bigint IS NULL OR p.created_at < $3 OR (p.created_at = $3 AND p.id > $4))
                    AND (NOT $6::boolean OR s.read_at IS NULL) AND (NOT $7::boolean OR s.starred_at IS NOT NULL)
                ORDER BY p.created_at DESC, p.id LIMIT $5
                """, [query.feed, since, after.map { "\(StoredTime.milliseconds($0.createdAt))" }, after?.id.rawValue, "\(query.limit)",
                      query.unreadOnly ? "t" : "f", query.starredOnly ? "t" : "f"])
        } else {
            let listing = Self.listing(query)
            table = try runTable("reading posts", "SELECT \(Self.postColumns) FROM posts p \(Self.postJoins) \(listing.sql)", listing.values)
        }
        return try withVideos(storedPosts(table, "reading posts"))
    }

    /// The listing's conditions, order and limit (after `FROM posts p` and joins that include
    /// `post_state s`), and their values: one text for posts read whole and for their positions.
    private static func listing(_ query: PostQuery) -> (sql: String, values: [String?]) {
        let sql = """
            WHERE ($1::text IS NULL OR p.feed = $1) AND ($2::bigint IS NULL OR p.created_at >= $2)
                AND (NOT $3::boolean OR s.read_at IS NULL) AND (NOT $5::boolean OR s.starred_at IS NOT NULL)
                AND ($9::bigint IS NULL OR p.created_at <= $9) AND ($6::bigint IS NULL OR \(query.oldestFirst
                    ? "(p.created_at >= $6 AND (p.created_at > $6 OR p.feed < $7 OR (p.feed = $7 AND p.id < $8)))"
                    : "(p.created_at <= $6 AND (p.created_at < $6 OR p.feed > $7 OR (p.feed = $7 AND p.id > $8)))"))
            ORDER BY \(query.oldestFirst ? "p.created_at, p.feed DESC, p.id DESC" : "p.created_at DESC, p.feed, p.id") LIMIT $4
            """
        return (sql, [query.feed, query.since.map { "\(StoredTime.milliseconds($0))" }, query.unreadOnly ? "t" : "f", "\(query.limit)",
                      query.starredOnly ? "t" : "f", query.continuing.map { "\(StoredTime.milliseconds($0.createdAt))" }, query.continuing?.feed,
                      query.continuing?.id.rawValue, query.until.map { "\(StoredTime.milliseconds($0))" }])
    }

    /// The positions alone of the posts a listing query reads: time, feed and id from the
    /// listing's index (and the marks for the filters), no text, no authors.
    public func positions(matching query: PostQuery) throws -> [StoredPost.ListingPosition] {
        guard !query.stable else { return try posts(matching: query).map(\.listingPosition) }
        let listing = Self.listing(query)
        let table = try runTable("reading post ids", """
            SELECT p.created_at, p.feed, p.id FROM posts p LEFT JOIN post_state s ON s.feed = p.feed AND s.post_id = p.id \(listing.sql)
            """, listing.values)
        return table.rows.map { row in
            StoredPost.ListingPosition(createdAt: StoredTime.date(row[0].flatMap { Int64($0) } ?? 0), feed: row[1] ?? "", id: PostID(row[2] ?? ""))
        }
    }

    /// Each feed's change counter (migration 015's triggers move it).
    public func feedVersions() throws -> [String: Int64]? {
        let table = try runTable("reading feed versions", "SELECT feed, version FROM feed_versions", [])
        return Dictionary(table.rows.map { ($0[0] ?? "", $0[1].flatMap { Int64($0) } ?? 0) }, uniquingKeysWith: max)
    }

    public func search(_ query: SearchQuery) throws -> [SearchHit] {
        let db = try db("searching posts")
        let table: PostgresTable
        do {
            table = try searchRows(query, in: db)
        } catch let error as PostgresError {
            // websearch_to_tsquery reads any text, but a query can still be too large or too
            // deeply nested for it: a fault of the query, not of the store.
            guard let state = error.sqlState, state == "42601" || state.hasPrefix("22") || state.hasPrefix("54") else {
                throw ServiceError(.storage, "searching posts", error.description)
            }
            let reason = error.description.split(whereSeparator: \.isNewline).first.map(String.init)?
                .replacingOccurrences(of: "ERROR:  ", with: "") ?? "refused"
            throw ServiceError(.invalidRequest, "searching for \(Terminal.safe(query.text, limit: 80))",
                               "the search query \"\(Terminal.safe(query.text, limit: 80))\" is more than PostgreSQL's text search "
                               + "can take (\(Terminal.safe(reason, limit: 120))); use fewer words, quotes or brackets")
        }
        let stored = try withVideos(storedPosts(table, "searching posts"))
        let (snippet, rank) = try storage("searching posts") {
            (try table.layout.position(of: "snippet"), try table.layout.position(of: "search_rank"))
        }
        return zip(stored, table.rows).map { SearchHit(stored: $0, snippet: $1[snippet] ?? "", rank: Double($1[rank] ?? "0") ?? 0) }
    }

    private func searchRows(_ query: SearchQuery, in db: PostgresConnection) throws -> PostgresTable {
        try db.table("""
            SELECT \(Self.postColumns),
                   ts_headline('simple', p.text, q, 'StartSel=' || chr(57344) || ', StopSel=' || chr(57345) || ', MaxFragments=1')
                       AS snippet,
                   -ts_rank(p.search, q) AS search_rank
            FROM posts p \(Self.postJoins), websearch_to_tsquery('simple', $1) q
            WHERE p.search @@ q AND ($2::text IS NULL OR p.feed = $2) AND ($3::bigint IS NULL OR p.created_at >= $3)
            ORDER BY search_rank, p.created_at DESC, p.feed, p.id LIMIT $4
            """, [query.text, query.feed, query.since.map { "\(StoredTime.milliseconds($0))" }, "\(query.limit)"])
    }

    /// The stored posts of a result selecting ``StoredPostColumns/select``, each read by column name.
    private func storedPosts(_ table: PostgresTable, _ operation: String) throws -> [StoredPost] {
        var reader = try storage(operation) { try StoredPostColumns(table.layout) }
        return table.rows.map { reader.storedPost(PostgresRow($0)) }
    }

    /// Fills in each post's resolved videos, in the post's order, with one query per feed.
    private func withVideos(_ posts: [StoredPost]) throws -> [StoredPost] {
        var result = posts
        for feed in Set(posts.map(\.feed)) {
            let ids = Set(posts.filter { $0.feed == feed }.flatMap { $0.post.videoIDs.map(\.rawValue) })
            guard !ids.isEmpty else { continue }
            let table = try runTable("reading videos", """
                SELECT \(VideoColumns.names.joined(separator: ", ")) FROM videos
                WHERE feed = $1 AND id = ANY($2::text[]) AND resolved = 1
                """, [feed, pgArray(Array(ids))])
            let positions = try storage("reading videos") { try VideoColumns.Positions(table.layout) }
            var videos: [String: Video] = [:]
            for row in table.rows {
                guard let video = VideoColumns(PostgresRow(row), at: positions).video else { continue }
                videos[video.id.rawValue] = video
            }
            for index in result.indices where result[index].feed == feed {
                result[index].videos = result[index].post.videoIDs.compactMap { videos[$0.rawValue] }
            }
        }
        return result
    }
}
