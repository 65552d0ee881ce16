import Core
import Foundation
import StoreKit

/// The read side: statuses with lease holders, posts, search (a `tsvector`), daemons, read marks.
extension PostgresFeedStore: FeedReader, ReadMarker {
    private static let postColumns = StoredPostColumns.select
    private static let postJoins = StoredPostColumns.joins

    public func feedStatuses() throws -> [FeedStatus] {
        try run("reading feed status", """
            SELECT f.name, f.cursor, f.cursor_validator, f.last_success_at, f.last_error_at, f.last_error, f.consecutive_failures,
                   f.next_attempt_at, (SELECT COUNT(*) FROM posts p WHERE p.feed = f.name), f.location, f.polling_stopped,
                   (SELECT l.holder FROM feed_leases l WHERE l.feed = f.name AND l.token IS NOT NULL AND l.expires_at > \(Self.nowMs)),
                   f.sweep_withheld, f.discovered_from
            FROM feeds f ORDER BY f.name
            """).map { row in
            FeedStatus(feed: row[0] ?? "", cursor: row[1].map { FeedCursor(position: $0, validator: row[2]) },
                       lastSuccessAt: row[3].map { Date(pgMilliseconds: $0) }, lastErrorAt: row[4].map { Date(pgMilliseconds: $0) },
                       lastError: row[5], consecutiveFailures: Int(row[6] ?? "0") ?? 0,
                       nextAttemptAt: row[7].map { Date(pgMilliseconds: $0) }, postCount: Int(row[8] ?? "0") ?? 0,
                       location: row[9], discoveredFrom: row[13], pollingStopped: row[10], leaseHolder: row[11],
                       sweepWithheld: row[12])
        }
    }

    public func feedNames() throws -> [String] {
        try run("listing feeds", "SELECT name FROM feeds UNION SELECT DISTINCT feed FROM posts ORDER BY 1").compactMap { $0[0] }
    }

    public func posts(matching query: PostQuery) throws -> [StoredPost] {
        let since = query.since.map { "\(milliseconds($0))" }
        let table: PostgresTable
        if query.stable {
            let after = query.after
            table = try runTable("reading posts", """
                SELECT \(Self.postColumns) FROM posts p \(Self.postJoins)
                WHERE p.feed = $1 AND ($2::bigint IS NULL OR p.created_at >= $2)
                    AND ($3::bigint IS NULL OR p.created_at < $3 OR (p.created_at = $3 AND p.id > $4))
                    AND (NOT $6::boolean OR s.read_at IS NULL)
                ORDER BY p.created_at DESC, p.id LIMIT $5
                """, [query.feed, since, after.map { "\(milliseconds($0.createdAt))" }, after?.id.rawValue, "\(query.limit)",
                      query.unreadOnly ? "t" : "f"])
        } else {
            table = try runTable("reading posts", """
                SELECT \(Self.postColumns) FROM posts p \(Self.postJoins)
                WHERE ($1::text IS NULL OR p.feed = $1) AND ($2::bigint IS NULL OR p.created_at >= $2)
                    AND (NOT $3::boolean OR s.read_at IS NULL)
                ORDER BY p.created_at DESC, p.feed, p.id LIMIT $4
                """, [query.feed, since, query.unreadOnly ? "t" : "f", "\(query.limit)"])
        }
        return try withVideos(storedPosts(table, "reading posts"))
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
            """, [query.text, query.feed, query.since.map { "\(milliseconds($0))" }, "\(query.limit)"])
    }

    public func daemons() throws -> [DaemonInstance] {
        try run("reading the daemons", "SELECT instance, host, pid, started_at, beat_at FROM daemon ORDER BY started_at, instance").map { row in
            DaemonInstance(id: row[0] ?? "", host: row[1] ?? "", process: row[2] ?? "",
                           startedAt: Date(pgMilliseconds: row[3]), beatAt: Date(pgMilliseconds: row[4]))
        }
    }

    public func setRead(_ read: Bool, postID: PostID, inFeed feed: String?) throws -> [String] {
        let db = try db("marking post \(postID)")
        return try storage("marking post \(postID)") {
            try db.transaction {
                // A read mark exists nowhere else: it waits for the disk, unlike a page.
                try db.execute("SET LOCAL synchronous_commit = on")
                let feeds = try db.query("SELECT feed FROM posts WHERE id = $1 AND ($2::text IS NULL OR feed = $2) ORDER BY feed",
                                         [postID.rawValue, feed]).compactMap { $0[0] }
                guard feeds.count == 1 else { return feeds }
                if read {
                    try db.query("""
                        INSERT INTO post_state (feed, post_id, read_at) VALUES ($1, $2, $3)
                        ON CONFLICT (feed, post_id) DO UPDATE SET read_at = $3 WHERE post_state.read_at IS NULL
                        """, [feeds[0], postID.rawValue, "\(milliseconds(Date()))"])
                } else {
                    try db.query("UPDATE post_state SET read_at = NULL WHERE feed = $1 AND post_id = $2", [feeds[0], postID.rawValue])
                }
                return feeds
            }
        }
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
