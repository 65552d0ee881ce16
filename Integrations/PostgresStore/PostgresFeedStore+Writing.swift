import Core
import Foundation
import StoreKit

/// The write path: each page one transaction, one set-based statement per table.
extension PostgresFeedStore: PageCommitter {
    public func cursor(ofFeed feed: String) throws -> FeedCursor? {
        try run("reading the cursor of feed \(feed)", "SELECT cursor, cursor_validator FROM feeds WHERE name = $1", [feed])
            .first.flatMap { row in row[0].map { FeedCursor(position: $0, validator: row[1]) } }
    }

    /// Encodes the page's rows on the caller's task, so that work is not on the store's queue.
    public nonisolated func prepare(_ page: FeedPage) -> PostgresPreparedPage { PostgresPreparedPage(page) }

    /// Commits the page only while `lease` is still this worker's: held here (not given back)
    /// and, checked in the page's transaction, not taken over by another worker.
    public func apply(_ rows: PostgresPreparedPage, videos: [Video], under lease: FeedLease) async throws -> PageWriteResult {
        let feed = lease.feed
        await pageGate(feed)
        let operation = "committing a page of feed \(feed)"
        let db = try db(operation)
        return try storage(operation) {
            do {
                return try write(rows, videos: videos, under: lease, operation, in: db)
            } catch {
                db.rollbackIfOpen()
                throw error
            }
        }
    }

    /// The page's transaction, in five round trips whatever the page holds: BEGIN with the lease
    /// renewal and the statements that need nothing from the server (videos, authors, the staging
    /// table) in one pipeline; the COPY (two: libpq waits for the server to accept it); the
    /// posts' upsert; then the video links, deletions, resolved videos and the cursor with COMMIT
    /// in one pipeline. COMMIT is only sent once the renewal proved the lease still this worker's;
    /// the renewal locks the lease row until the commit, so no other worker takes the feed between.
    private func write(_ rows: PostgresPreparedPage, videos: [Video], under lease: FeedLease, _ operation: String,
                       in db: PostgresConnection) throws -> PageWriteResult {
        let feed = lease.feed
        var result = PageWriteResult()
        var opening: [PostgresConnection.Statement] = [("BEGIN", []), try leaseRenewal(of: lease, operation)]
        if let videoIDs = rows.videoIDs {
            opening.append(("INSERT INTO videos (feed, id) SELECT $1, v FROM unnest($2::text[]) v ON CONFLICT (feed, id) DO NOTHING",
                            [feed, videoIDs]))
        }
        let authors = rows.profiles == nil ? nil : opening.count
        if let profiles = rows.profiles { opening.append((Self.upsertUsers, [feed, profiles])) }
        if rows.upsertCount > 0 { opening.append((PostColumns.stagingTable, [])) }
        let opened = try db.pipeline(opening)
        _ = try opened[0].get()
        try leaseKept(try opened[1].get(), operation)
        for answer in opened.dropFirst(2) { _ = try answer.get() }
        if let authors {
            let users = try opened[authors].get()
            result.rowsWritten += users.count
            let renamed = users.filter { $0[1] == "t" }.compactMap { $0[0] }
            if !renamed.isEmpty {
                // The posts' copies of their author's handle and name follow the profile.
                try db.query("""
                    UPDATE posts p SET author_handle = u.handle, author_name = u.display_name FROM users u
                    WHERE u.pk = ANY($1::bigint[]) AND p.author_pk = u.pk
                        AND (p.author_handle, p.author_name) IS DISTINCT FROM (u.handle, u.display_name)
                    """, ["{" + renamed.joined(separator: ",") + "}"])
            }
        }
        var closing: [PostgresConnection.Statement] = []
        if rows.upsertCount > 0 {
            // COPY into a staging table, then one set-based upsert: measured faster than
            // passing the page as one JSON parameter (see the README's figures).
            try db.copyIn("COPY page_posts FROM STDIN", rows.copyLines)
            let changed = try db.query(Self.upsertPosts, [feed])
            closing += videoLinks(of: changed, videosByPost: rows.videosByPost, feed: feed)
            result.inserted = changed.filter { $0[0] == "t" }.count
            result.updated = changed.count - result.inserted
            result.unchanged = rows.upsertCount - changed.count
            result.rowsWritten += changed.count
        }
        let deleting = rows.deletions == nil ? nil : closing.count
        if let deletions = rows.deletions {
            // A deleted post takes the entries that repost it along; each half searches its own
            // index (migration 006 indexes repost_of).
            closing.append(("""
                DELETE FROM posts WHERE pk IN (SELECT pk FROM posts WHERE feed = $1 AND id = ANY($2::text[])
                                               UNION SELECT pk FROM posts WHERE feed = $1 AND repost_of = ANY($2::text[]))
                RETURNING 1
                """, [feed, deletions]))
        }
        let resolving = videos.isEmpty ? nil : closing.count
        if !videos.isEmpty { closing.append(videoUpsert(videos, feed: feed)) }
        // A streamed batch has no cursor: the feed keeps the one its last poll committed.
        let moving = rows.page.nextCursor == nil ? nil : closing.count
        if let cursor = rows.page.nextCursor {
            closing.append(("""
                INSERT INTO feeds (name, cursor, cursor_validator) VALUES ($1, $2, $3)
                ON CONFLICT (name) DO UPDATE SET cursor = $2, cursor_validator = $3
                WHERE (feeds.cursor, feeds.cursor_validator) IS DISTINCT FROM ($2::text, $3::text) RETURNING 1
                """, [feed, cursor.position, cursor.validator]))
        }
        // After the page's own authors and posts, so a post it carries takes the new handle too;
        // in its transaction, so a rename is committed with the stream position or not at all.
        let renaming = closing.count
        closing += rows.page.renames.map { Self.rename($0, feed: feed) }
        if let position = rows.page.streamPosition {
            closing.append(("UPDATE feeds SET stream_position = $2 WHERE name = $1", [feed, position]))
        }
        closing.append(("COMMIT", []))
        let closed = try db.pipeline(closing).map { try $0.get() }
        if let deleting {
            result.deleted = closed[deleting].count
            result.rowsWritten += closed[deleting].count
        }
        if let resolving { result.rowsWritten += closed[resolving].count }
        if let moving { result.rowsWritten += closed[moving].count }
        result.renamed = closed[renaming ..< renaming + rows.page.renames.count].filter { !$0.isEmpty }.count
        result.rowsWritten += result.renamed
        return result
    }

    /// Upserts the page's authors; `before` reads the rows as they were when the statement began,
    /// so the renamed authors (`pk`, `true`) are told from the ones whose newer post merely moved
    /// `profile_at`. One row per author written.
    static let upsertUsers = """
        WITH incoming AS (
            SELECT * FROM jsonb_to_recordset($2::jsonb)
                AS r(id text, handle text, display_name text, avatar_url text, profile_at bigint)),
        before AS (SELECT u.pk, u.handle, u.display_name FROM users u JOIN incoming i ON u.feed = $1 AND u.id = i.id),
        written AS (
            INSERT INTO users (feed, id, handle, display_name, avatar_url, profile_at)
            SELECT $1, id, handle, display_name, avatar_url, profile_at FROM incoming
            ON CONFLICT (feed, id) DO UPDATE SET handle = excluded.handle, display_name = excluded.display_name,
                avatar_url = excluded.avatar_url, profile_at = excluded.profile_at
            WHERE excluded.profile_at >= coalesce(users.profile_at, excluded.profile_at)
                AND (excluded.profile_at > coalesce(users.profile_at, excluded.profile_at)
                     OR (users.handle, users.display_name, users.avatar_url)
                        IS DISTINCT FROM (excluded.handle, excluded.display_name, excluded.avatar_url))
            RETURNING pk, handle, display_name)
        SELECT w.pk, (w.handle, w.display_name) IS DISTINCT FROM (b.handle, b.display_name)
        FROM written w JOIN before b ON b.pk = w.pk
        UNION ALL SELECT NULL, false FROM written w WHERE NOT EXISTS (SELECT 1 FROM before b WHERE b.pk = w.pk)
        """

    /// Upserts the staged posts with their authors' keys and names; one row (`xmax = 0`, `pk`,
    /// `id`) per post inserted or changed.
    static let upsertPosts = """
        INSERT INTO posts (feed, id, author_id, text, created_at, edited_at, reply_to, reply_count, repost_count,
                           like_count, video_ids, html, content_warning, language, visibility, repost_by, repost_of,
                           attachments, title, url, quote_of, quote_count, labels, repost_at,
                           author_pk, author_handle, author_name, repost_by_pk)
        SELECT $1, r.id, r.author_id, r.text, r.created_at, r.edited_at, r.reply_to, r.reply_count, r.repost_count,
               r.like_count, r.video_ids, r.html, r.content_warning, r.language, r.visibility, r.repost_by, r.repost_of,
               r.attachments, r.title, r.url, r.quote_of, r.quote_count, r.labels, r.repost_at,
               u.pk, u.handle, u.display_name, b.pk
        FROM page_posts r
        LEFT JOIN users u ON u.feed = $1 AND u.id = r.author_id
        LEFT JOIN users b ON b.feed = $1 AND b.id = r.repost_by
        ON CONFLICT (feed, id) DO UPDATE SET author_id = excluded.author_id, text = excluded.text,
            created_at = excluded.created_at, edited_at = excluded.edited_at, reply_to = excluded.reply_to,
            reply_count = excluded.reply_count, repost_count = excluded.repost_count, like_count = excluded.like_count,
            video_ids = excluded.video_ids, html = excluded.html, content_warning = excluded.content_warning,
            language = excluded.language, visibility = excluded.visibility, repost_by = excluded.repost_by,
            repost_of = excluded.repost_of, attachments = excluded.attachments, title = excluded.title,
            url = excluded.url, quote_of = excluded.quote_of, quote_count = excluded.quote_count,
            labels = excluded.labels, repost_at = excluded.repost_at, author_pk = excluded.author_pk,
            author_handle = excluded.author_handle, author_name = excluded.author_name,
            repost_by_pk = excluded.repost_by_pk
        WHERE (posts.author_id, posts.text, posts.created_at, posts.edited_at, posts.reply_to, posts.reply_count,
               posts.repost_count, posts.like_count, posts.video_ids, posts.html, posts.content_warning,
               posts.language, posts.visibility, posts.repost_by, posts.repost_of, posts.attachments, posts.title,
               posts.url, posts.quote_of, posts.quote_count, posts.labels, posts.repost_at)
            IS DISTINCT FROM
              (excluded.author_id, excluded.text, excluded.created_at, excluded.edited_at, excluded.reply_to,
               excluded.reply_count, excluded.repost_count, excluded.like_count, excluded.video_ids, excluded.html,
               excluded.content_warning, excluded.language, excluded.visibility, excluded.repost_by,
               excluded.repost_of, excluded.attachments, excluded.title, excluded.url, excluded.quote_of,
               excluded.quote_count, excluded.labels, excluded.repost_at)
        RETURNING xmax = 0, pk, id
        """

    /// The statements that keep `post_videos` in step with the written posts (`pk`, `id` and
    /// whether it was an insert, as the upsert returned them), at most two for the page: the links
    /// come from the page's own posts, not from reading them back.
    private nonisolated func videoLinks(of written: [[String?]], videosByPost: [String: [String]],
                                        feed: String) -> [PostgresConnection.Statement] {
        var updated: [String] = [], pks: [String] = [], positions: [String] = [], videoIDs: [String] = []
        for row in written {
            guard let pk = row[1], let id = row[2] else { continue }
            if row[0] == "f" { updated.append(pk) }
            for (position, video) in (videosByPost[id] ?? []).enumerated() {
                pks.append(pk)
                positions.append("\(position)")
                videoIDs.append(video)
            }
        }
        var statements: [PostgresConnection.Statement] = []
        if !updated.isEmpty {
            statements.append(("DELETE FROM post_videos WHERE post_pk = ANY($1::bigint[])", ["{" + updated.joined(separator: ",") + "}"]))
        }
        guard !pks.isEmpty else { return statements }
        statements.append(("""
            INSERT INTO post_videos (post_pk, position, video_pk)
            SELECT t.pk, t.position, v.pk FROM unnest($1::bigint[], $2::int[], $3::text[]) AS t(pk, position, video)
            JOIN videos v ON v.feed = $4 AND v.id = t.video
            ON CONFLICT DO NOTHING
            """, ["{" + pks.joined(separator: ",") + "}", "{" + positions.joined(separator: ",") + "}", pgArray(videoIDs), feed]))
        return statements
    }
}
