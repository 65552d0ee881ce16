import Core
import Foundation
import StoreKit

/// The write path: each page committed whole, alone or in one transaction with the pages a sync
/// has waiting behind it, one set-based statement per table.
extension PostgresFeedStore: PageCommitter {
    /// Encodes the page's rows on the caller's task, so that work is not on the store's queue.
    public nonisolated func prepare(_ page: FeedPage) -> PostgresPreparedPage {
        PostgresPreparedPage(page, searchWords: searchWordsAgreed.load(ordering: .relaxed))
    }

    /// Pages a sync has waiting commit together, up to this many: each transaction's own costs
    /// (its BEGIN, the lease's renewal, its COMMIT) are then shared.
    public nonisolated var pagesPerTransaction: Int { 8 }

    /// Commits the page only while `lease` is still this worker's: held here (not given back)
    /// and, checked in the page's transaction, not taken over by another worker.
    public func apply(_ rows: PostgresPreparedPage, videos: [Video], under lease: FeedLease,
                      announcing announcer: (any PageAnnouncer)?) async throws -> PageWriteResult {
        try await apply([(rows, videos)], under: lease, announcing: announcer)[0]
    }

    /// Commits the pages in one transaction, in order, only while `lease` is still this
    /// worker's (as ``apply(_:videos:under:announcing:)``): the lease is renewed once, as the
    /// transaction begins.
    public func apply(_ pages: [(page: PostgresPreparedPage, videos: [Video])], under lease: FeedLease,
                      announcing announcer: (any PageAnnouncer)?) async throws -> [PageWriteResult] {
        let feed = lease.feed
        await pageGate(feed)
        let operation = pages.count == 1 ? "committing a page of feed \(feed)" : "committing \(pages.count) pages of feed \(feed)"
        let db = try db(operation)
        return try storage(operation) {
            let before = db.roundTrips
            defer { lastPageRoundTrips = db.roundTrips - before }
            do {
                return try pages.indices.map { index in
                    try write(pages[index].page, videos: pages[index].videos, under: lease, announcing: announcer,
                              opens: index == pages.startIndex, closes: index == pages.endIndex - 1, operation, in: db)
                }
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
    /// in one pipeline. A page of at most ``PostgresPreparedPage/jsonLimit`` posts takes two: its
    /// posts' upsert, with the posts as one parameter, goes in the first pipeline. A first walk's
    /// page copied straight into `posts` (``PostgresDirectRows``) takes four: its authors are read
    /// back and its savepoint opened in the first pipeline, and it needs no upsert.
    /// COMMIT is only sent once the renewal proved the lease still this worker's; the renewal
    /// locks the lease row until the commit, so no other worker takes the feed between.
    /// With an announcer, COMMIT goes in a round trip of its own, after the page's webhook
    /// deliveries: they are made from what the page did, which the one before answers.
    ///
    /// Of pages committed together, only the first `opens` the transaction (BEGIN and the
    /// renewal) and only the last `closes` it (COMMIT); the staging table, whose rows a commit
    /// would have emptied, is emptied before each page that uses it.
    private func write(_ rows: PostgresPreparedPage, videos: [Video], under lease: FeedLease, announcing announcer: (any PageAnnouncer)?,
                       opens: Bool, closes: Bool, _ operation: String, in db: PostgresConnection) throws -> PageWriteResult {
        let feed = lease.feed
        var result = PageWriteResult()
        // A first walk's page of new posts whose words are all vouched for goes straight into `posts`.
        let direct = walkingNew.contains(feed) ? rows.direct : nil
        let begin = opens ? Self.beginWithGenericPlans + [try leaseRenewal(of: lease, operation)] : []
        var opening: [PostgresConnection.Statement] = begin
        if let videoIDs = rows.videoIDs {
            opening.append(("INSERT INTO videos (feed, id) SELECT $1, v FROM unnest($2::text[]) v ON CONFLICT (feed, id) DO NOTHING",
                            [feed, videoIDs]))
        }
        let authors = rows.profiles == nil ? nil : opening.count
        if let profiles = rows.profiles { opening.append((Self.upsertUsers, [feed, profiles])) }
        let upserting = opening.count
        switch rows.posts {
        case .copy where direct == nil: opening += Self.emptyStagingTable
        case .copy: break
        case .json(let posts): opening.append((Self.upsertPostsFromJSON, [feed, posts]))
        case .none: break
        }
        let reading = direct == nil ? nil : opening.count
        if let direct { opening += [(PostgresDirectRows.readAuthors, [feed, direct.authorIDs]), ("SAVEPOINT new_posts", [])] }
        let opened = opening.isEmpty ? [] : try db.pipeline(opening)
        let renewal = opens ? begin.count - 1 : nil
        for (index, answer) in opened.enumerated() {
            if index == renewal { try leaseKept(try answer.get(), operation) } else { _ = try answer.get() }
        }
        // The `users_au_profile` trigger has carried a changed handle or name to the author's posts.
        if let authors { result.rowsWritten += try opened[authors].get().count }
        var closing: [PostgresConnection.Statement] = []
        var upserted: [[String?]]?
        switch rows.posts {
        case .copy(let lines):
            if let direct, let reading, let copied = try copy(direct, authors: try opened[reading].get(), feed: feed, in: db) {
                closing.append(("RELEASE new_posts", []))
                if let links = direct.videoLinks(rows.videosByPost, feed: feed) { closing.append(links) }
                result.inserted = copied
                result.insertedIDs = direct.rows.map { PostID($0.id) }
                result.rowsWritten += copied
            } else {
                if direct != nil { _ = try db.pipeline(Self.emptyStagingTable).map { try $0.get() } }
                // Binary COPY into a staging table, then one set-based upsert: measured faster than
                // passing a long page as one JSON parameter (see the README's figures).
                try db.copyIn("COPY page_posts FROM STDIN (FORMAT binary)", lines)
                upserted = try writeStaged(rows.upsertCount, feed: feed, in: db)
            }
        case .json: upserted = try opened[upserting].get()
        case .none: break
        }
        if let changed = upserted {
            closing += videoLinks(of: changed, videosByPost: rows.videosByPost, feed: feed)
            result.inserted = changed.filter { $0[0] == "t" }.count
            for row in changed { if let id = row[2] { row[0] == "t" ? result.insertedIDs.append(PostID(id)) : result.updatedIDs.append(PostID(id)) } }
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
                RETURNING id
                """, [feed, deletions]))
        }
        let resolving = videos.isEmpty ? nil : closing.count
        if !videos.isEmpty { closing.append(videoUpsert(videos, feed: feed)) }
        // A streamed batch has no cursor: the feed keeps the one its last poll committed.
        let moving = rows.page.nextCursor == nil ? nil : closing.count
        if let cursor = rows.page.nextCursor { closing.append(Self.sql.moveCursor(to: cursor, ofFeed: feed).pipelined) }
        // After the page's own authors and posts, so a post it carries takes the new handle too;
        // in its transaction, so a rename is committed with the stream position or not at all.
        let renaming = closing.count
        closing += rows.page.renames.map { Self.rename($0, feed: feed) }
        if let position = rows.page.streamPosition {
            closing.append(Self.sql.setStreamPosition(position, ofFeed: feed).pipelined)
        }
        if announcer == nil && closes { closing.append(("COMMIT", [])) }
        let closed = closing.isEmpty ? [] : try db.pipeline(closing).map { try $0.get() }
        if let deleting {
            result.deleted = closed[deleting].count
            // The page's own deletions, not the reposts they took along (as SQLite's store reports them).
            let asked = Set(rows.page.changes.compactMap { change -> PostID? in if case .delete(let id) = change { id } else { nil } })
            result.deletedIDs = closed[deleting].compactMap { $0.first ?? nil }.map { PostID($0) }.filter(asked.contains)
            result.rowsWritten += closed[deleting].count
        }
        if let resolving { result.rowsWritten += closed[resolving].count }
        if let moving { result.rowsWritten += closed[moving].count }
        result.renamed = closed[renaming ..< renaming + rows.page.renames.count].filter { !$0.isEmpty }.count
        result.rowsWritten += result.renamed
        if let announcer {
            let (deliveries, due) = announcer.announcement(feed: feed, page: rows.page, result: result)
            let statements = deliveries.map { Self.sql.enqueue($0, at: due).pipelined } + (closes ? [("COMMIT", [])] : [])
            if !statements.isEmpty { _ = try db.pipeline(statements).map { try $0.get() } }
        }
        return result
    }

    /// The staging table, made once per session and emptied of an earlier page's rows in this
    /// transaction. DELETE, not TRUNCATE: a temporary table's TRUNCATE gives it a new file each
    /// time (3% of the server's time in a cold sync, most of it the kernel making files). A page
    /// copied straight into `posts` does not touch it, so its commit does not empty it either.
    static let emptyStagingTable: [PostgresConnection.Statement] = [(PostColumns.stagingTable, []), ("DELETE FROM page_posts", [])]

    /// Copies a first walk's page of new posts straight into `posts`, under the savepoint the
    /// page's first pipeline opened; the number copied. `nil` when a stored author's words are
    /// ones the server makes, or when a post is there after all: the savepoint then takes the
    /// copy back, and the page is staged and upserted.
    private func copy(_ direct: PostgresDirectRows, authors: [[String?]], feed: String, in db: PostgresConnection) throws -> Int? {
        guard let bytes = direct.rows(feed: feed, authors: authors) else { return nil }
        do {
            try db.copyIn(PostgresDirectRows.copy, bytes)
            return direct.rows.count
        } catch let error as PostgresError where error.sqlState == Self.uniqueViolation {
            try db.execute("ROLLBACK TO new_posts")
            walkingNew.remove(feed)
            return nil
        }
    }

    /// Writes the staged posts (`count` of them), each as it is new, changed or unchanged, in
    /// one round trip. After a long page of only new posts (a feed's first walk back, most often)
    /// the next is inserted outright, without the upsert's check of each post against the feed's
    /// (8% of the server's time in a cold sync), under a savepoint: when one of its posts is there
    /// after all, the savepoint takes the insert back and the page is upserted.
    private func writeStaged(_ count: Int, feed: String, in db: PostgresConnection) throws -> [[String?]] {
        var written: [[String?]]?
        if walkingNew.contains(feed) {
            let answers = try db.pipeline([("SAVEPOINT new_posts", []), (Self.insertStagedPosts, [feed]), ("RELEASE new_posts", [])])
            _ = try answers[0].get()
            switch answers[1] {
            case .success(let rows):
                _ = try answers[2].get()
                written = rows
            case .failure(let error) where error.sqlState == Self.uniqueViolation:
                written = try db.pipeline([("ROLLBACK TO new_posts", []), (Self.upsertPosts, [feed])]).map { try $0.get() }[1]
            case .failure(let error):
                throw error
            }
        } else {
            written = try db.query(Self.upsertPosts, [feed])
        }
        let rows = written ?? []
        if rows.count == count && rows.allSatisfy({ $0[0] == "t" }) { walkingNew.insert(feed) } else { walkingNew.remove(feed) }
        return rows
    }

    /// SQLSTATE of a unique constraint's violation.
    private static let uniqueViolation = "23505"

    /// Upserts the page's authors from a `jsonb` array of ``UserColumns`` (`$2`); one row per
    /// author written.
    static let upsertUsers = """
        INSERT INTO users (feed, \(UserColumns.names.joined(separator: ", ")))
        SELECT $1, \(UserColumns.names.joined(separator: ", "))
        FROM jsonb_to_recordset($2::jsonb) AS r(\(UserColumns.columns.map { "\($0.name) \($0.kind.postgresType)" }.joined(separator: ", ")))
        \(sql.userUpsert)
        RETURNING 1
        """

    /// Upserts the staged posts with their authors' keys and names, joined from `users` (as
    /// SQLite's insert joins them); one row (`xmax = 0`, `pk`, `id`) per post inserted or changed.
    ///
    /// The page's authors and sharers are looked up first, once each, by key, each in a
    /// `LATERAL … LIMIT 1` the planner cannot flatten: as a plain join, the session's one generic
    /// plan (made for the average feed) hashed every user of the feed for every page, a cost that
    /// grew with the feed's authors. The words of each one's handle and name are made there too,
    /// once per author rather than once per post. ``linkVideos`` finds videos by key as well.
    static let upsertPosts = writeStagedPosts(upserting: true)

    /// ``upsertPosts`` as a plain insert, which fails on a post the feed already has; every row
    /// it returns is an insert's.
    static let insertStagedPosts = writeStagedPosts(upserting: false)

    private static func writeStagedPosts(upserting: Bool) -> String { """
        WITH page_users AS MATERIALIZED (
            SELECT u.pk, u.id, u.handle, u.display_name, \(PostColumns.authorWords("u")) AS words
            FROM (SELECT author_id AS id FROM page_posts UNION SELECT repost_by FROM page_posts WHERE repost_by IS NOT NULL) k
            CROSS JOIN LATERAL (SELECT pk, id, handle, display_name FROM users WHERE feed = $1 AND id = k.id LIMIT 1) u
        )
        \(upsertPosts(from: "page_posts r", joining: """
            LEFT JOIN page_users u ON u.id = r.author_id
            LEFT JOIN page_users b ON b.id = r.repost_by
            """, authorWords: "u.words", upserting: upserting))
        """
    }

    /// ``upsertPosts`` from the page's posts as one `jsonb` parameter (`$2`, ``JSONRows``): a
    /// short page, whose few posts each look their author up.
    static let upsertPostsFromJSON = upsertPosts(from: """
        (SELECT \(PostColumns.staged.enumerated().map { "(e->>\($0.offset))::\($0.element.kind.postgresType) AS \($0.element.name)" }
            .joined(separator: ", ")) FROM jsonb_array_elements($2::jsonb) AS e) r
        """, joining: """
        LEFT JOIN LATERAL (SELECT pk, handle, display_name FROM users WHERE feed = $1 AND id = r.author_id LIMIT 1) u ON true
        LEFT JOIN LATERAL (SELECT pk FROM users WHERE feed = $1 AND id = r.repost_by LIMIT 1) b ON true
        """, authorWords: PostColumns.authorWords("u"), upserting: true)

    /// The upsert from `source` (the posts as `r`), `joining` their authors as `u` and sharers
    /// as `b`; `authorWords` is the vector of the author's handle and name.
    private static func upsertPosts(from source: String, joining authors: String, authorWords: String, upserting: Bool) -> String {
        let insert = """
            INSERT INTO posts (feed, \(PostColumns.names.joined(separator: ", ")), author_pk, author_handle, author_name, repost_by_pk, search)
            SELECT $1, \(PostColumns.names.map { "r.\($0)" }.joined(separator: ", ")), u.pk, u.handle, u.display_name, b.pk,
                   \(PostColumns.search(row: "r", author: "u", authorWords: authorWords))
            FROM \(source)
            \(authors)
            """
        guard upserting else { return insert + "\nRETURNING true, pk, id" }
        return insert + """

            ON CONFLICT (feed, id) DO UPDATE SET \((PostColumns.changing + ["author_pk", "author_handle", "author_name", "repost_by_pk", "search"])
                .map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            WHERE \(PostColumns.differ("posts", { "excluded.\($0)" }, in: .postgres))
            RETURNING xmax = 0, pk, id
            """
    }

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
        statements.append((Self.linkVideos, ["{" + pks.joined(separator: ",") + "}", "{" + positions.joined(separator: ",") + "}",
                                             pgArray(videoIDs), feed]))
        return statements
    }

    /// Links posts (`$1`) at positions (`$2`) to the feed's (`$4`) videos by id (`$3`), each
    /// video found by its key.
    static let linkVideos = """
        INSERT INTO post_videos (post_pk, position, video_pk)
        SELECT t.pk, t.position, v.pk FROM unnest($1::bigint[], $2::int[], $3::text[]) AS t(pk, position, video)
        CROSS JOIN LATERAL (SELECT pk FROM videos WHERE feed = $4 AND id = t.video LIMIT 1) v
        ON CONFLICT DO NOTHING
        """
}
