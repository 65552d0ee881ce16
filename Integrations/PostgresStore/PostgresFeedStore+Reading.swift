import Core
import Foundation

/// The read side: statuses with lease holders, posts, search (a `tsvector`), daemons, read marks.
extension PostgresFeedStore: FeedReader, ReadMarker {
    private static let postColumns = """
        p.feed, p.id, p.author_id, p.text, p.created_at, p.edited_at, p.reply_to, p.reply_count, p.repost_count, p.like_count,
        p.video_ids, u.handle, u.display_name, u.avatar_url, s.read_at, p.html, p.content_warning, p.language, p.visibility,
        p.repost_by, p.repost_of, p.attachments, r.handle, r.display_name, r.avatar_url, p.title, p.url, p.quote_of,
        p.quote_count, p.labels, p.repost_at
        """
    private static let postJoins = """
        LEFT JOIN users u ON u.pk = p.author_pk
        LEFT JOIN users r ON r.pk = p.repost_by_pk
        LEFT JOIN post_state s ON s.feed = p.feed AND s.post_id = p.id
        """

    public func feedStatuses() throws -> [FeedStatus] {
        try run("reading feed status", """
            SELECT f.name, f.cursor, f.cursor_validator, f.last_success_at, f.last_error_at, f.last_error, f.consecutive_failures,
                   f.next_attempt_at, (SELECT COUNT(*) FROM posts p WHERE p.feed = f.name), f.location, f.polling_stopped,
                   (SELECT l.holder FROM feed_leases l WHERE l.feed = f.name AND l.token IS NOT NULL AND l.expires_at > \(Self.nowMs)),
                   f.sweep_withheld
            FROM feeds f ORDER BY f.name
            """).map { row in
            FeedStatus(feed: row[0] ?? "", cursor: row[1].map { FeedCursor(position: $0, validator: row[2]) },
                       lastSuccessAt: row[3].map { Date(pgMilliseconds: $0) }, lastErrorAt: row[4].map { Date(pgMilliseconds: $0) },
                       lastError: row[5], consecutiveFailures: Int(row[6] ?? "0") ?? 0,
                       nextAttemptAt: row[7].map { Date(pgMilliseconds: $0) }, postCount: Int(row[8] ?? "0") ?? 0,
                       location: row[9], pollingStopped: row[10], leaseHolder: row[11],
                       sweepWithheld: row[12])
        }
    }

    public func feedNames() throws -> [String] {
        try run("listing feeds", "SELECT name FROM feeds UNION SELECT DISTINCT feed FROM posts ORDER BY 1").compactMap { $0[0] }
    }

    public func posts(matching query: PostQuery) throws -> [StoredPost] {
        let since = query.since.map { "\(milliseconds($0))" }
        let rows: [[String?]]
        if query.stable {
            let after = query.after
            rows = try run("reading posts", """
                SELECT \(Self.postColumns) FROM posts p \(Self.postJoins)
                WHERE p.feed = $1 AND ($2::bigint IS NULL OR p.created_at >= $2)
                    AND ($3::bigint IS NULL OR p.created_at < $3 OR (p.created_at = $3 AND p.id > $4))
                    AND (NOT $6::boolean OR s.read_at IS NULL)
                ORDER BY p.created_at DESC, p.id LIMIT $5
                """, [query.feed, since, after.map { "\(milliseconds($0.createdAt))" }, after?.id.rawValue, "\(query.limit)",
                      query.unreadOnly ? "t" : "f"])
        } else {
            rows = try run("reading posts", """
                SELECT \(Self.postColumns) FROM posts p \(Self.postJoins)
                WHERE ($1::text IS NULL OR p.feed = $1) AND ($2::bigint IS NULL OR p.created_at >= $2)
                    AND (NOT $3::boolean OR s.read_at IS NULL)
                ORDER BY p.created_at DESC, p.feed, p.id LIMIT $4
                """, [query.feed, since, query.unreadOnly ? "t" : "f", "\(query.limit)"])
        }
        return try withVideos(rows.map(storedPost))
    }

    public func search(_ query: SearchQuery) throws -> [SearchHit] {
        let db = try db("searching posts")
        let rows: [[String?]]
        do {
            rows = try searchRows(query, in: db)
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
        let stored = try withVideos(rows.map(storedPost))
        return zip(stored, rows).map { SearchHit(stored: $0, snippet: $1[31] ?? "", rank: Double($1[32] ?? "0") ?? 0) }
    }

    private func searchRows(_ query: SearchQuery, in db: PostgresConnection) throws -> [[String?]] {
        try db.query("""
            SELECT \(Self.postColumns),
                   ts_headline('simple', p.text, q, 'StartSel=' || chr(57344) || ', StopSel=' || chr(57345) || ', MaxFragments=1'),
                   -ts_rank(p.search, q)
            FROM posts p \(Self.postJoins), websearch_to_tsquery('simple', $1) q
            WHERE p.search @@ q AND ($2::text IS NULL OR p.feed = $2) AND ($3::bigint IS NULL OR p.created_at >= $3)
            ORDER BY 33, p.created_at DESC, p.feed, p.id LIMIT $4
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

    private func storedPost(_ row: [String?]) -> StoredPost {
        // A user without a stored profile shows their id as handle and name, as in the SQLite store.
        func user(_ id: String, _ handle: Int) -> User {
            let shown = row[handle] ?? id
            return User(id: UserID(id), handle: shown, displayName: row[handle + 1] ?? shown,
                        avatarURL: row[handle + 2].flatMap(URL.init(string:)))
        }
        let author = user(row[2] ?? "", 11)
        let repostBy = row[19].map { user($0, 22) }
        let post = Post(id: PostID(row[1] ?? ""), author: author, text: row[3] ?? "", createdAt: Date(pgMilliseconds: row[4]),
                        editedAt: row[5].map { Date(pgMilliseconds: $0) }, replyTo: row[6].map { PostID($0) },
                        counts: Post.Counts(replies: Int(row[7] ?? "0") ?? 0, reposts: Int(row[8] ?? "0") ?? 0,
                                            likes: Int(row[9] ?? "0") ?? 0, quotes: Int(row[28] ?? "0") ?? 0),
                        videoIDs: (decodeJSON([String].self, row[10]) ?? []).map { VideoID($0) }, html: row[15],
                        contentWarning: row[16], language: row[17], visibility: row[18].flatMap(Post.Visibility.init(rawValue:)),
                        repost: repostBy.flatMap { by in row[20].map { Post.Repost(by: by, originalID: PostID($0), at: row[30].map { Date(pgMilliseconds: $0) }) } },
                        attachments: (decodeJSON([PostgresAttachment].self, row[21]) ?? []).compactMap(\.attachment),
                        title: row[25], url: row[26].flatMap(URL.init(string:)), quoteOf: row[27].map { PostID($0) },
                        labels: decodeJSON([String].self, row[29]) ?? [])
        return StoredPost(feed: row[0] ?? "", post: post, isRead: row[14] != nil)
    }

    /// Fills in each post's resolved videos, in the post's order, with one query per feed.
    private func withVideos(_ posts: [StoredPost]) throws -> [StoredPost] {
        var result = posts
        for feed in Set(posts.map(\.feed)) {
            let ids = Set(posts.filter { $0.feed == feed }.flatMap { $0.post.videoIDs.map(\.rawValue) })
            guard !ids.isEmpty else { continue }
            let rows = try run("reading videos", """
                SELECT id, title, duration_ms, stream_url, thumbnail_url, size_bytes, width, height, fps FROM videos
                WHERE feed = $1 AND id = ANY($2::text[]) AND resolved = 1
                """, [feed, pgArray(Array(ids))])
            var videos: [String: Video] = [:]
            for row in rows {
                guard let id = row[0], let stream = row[3].flatMap(URL.init(string:)) else { continue }
                videos[id] = Video(id: VideoID(id), title: row[1] ?? "", duration: Double(row[2] ?? "0").map { $0 / 1000 } ?? 0,
                                   streamURL: stream, thumbnailURL: row[4].flatMap(URL.init(string:)), sizeBytes: row[5].flatMap { Int64($0) },
                                   width: row[6].flatMap { Int($0) }, height: row[7].flatMap { Int($0) }, framesPerSecond: row[8].flatMap { Double($0) })
            }
            for index in result.indices where result[index].feed == feed {
                result[index].videos = result[index].post.videoIDs.compactMap { videos[$0.rawValue] }
            }
        }
        return result
    }
}
