import Core
import Foundation
import StoreKit
#if canImport(Glibc)
import Glibc
#endif

/// The SQLite cache: a ``FeedStore`` in one database file that other SQLite tools can read.
///
/// Its leases are one file lock for the whole store (a feed's lease is a hold on it), and it
/// admits one daemon at a time: one machine, one writer. One actor owns the connection (SQLite connections are not `Sendable`). Each page is one
/// transaction holding its posts, authors, videos, deletions and the feed's cursor; a row
/// that already matches is not rewritten. Read/unread marks live in `post_state` and no
/// sync touches them.
public actor SQLiteFeedStore: FeedStore {
    /// Where the database lives: a file path, or `:memory:` for tests.
    public nonisolated let path: String
    let busyTimeoutMilliseconds: Int32
    private var database: SQLiteDatabase?
    let lock: StoreLockFile
    /// Held by the one daemon that serves this store, for as long as it runs.
    let daemonLock: StoreLockFile
    /// An older version's sessions file, `<database>.sessions`: moved into ``accountSessions`` at the first use of a session.
    private let sessions: SessionFile
    /// Every account's tokens: `<database>.sessions.sqlite`.
    let accountSessions: SessionDatabase
    /// One renewal at a time per account in this process.
    let sessionLocks = AccountLocks()

    /// Told about slow work an operator should see: an upgrade of an existing store.
    private let notice: @Sendable (String) -> Void

    /// The store's jobs run on a queue of their own, never on the cooperative pool's threads.
    private let executor = DatabaseExecutor(label: "feedsync.sqlite")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public init(path: String, busyTimeoutMilliseconds: Int32 = 5_000, notice: @escaping @Sendable (String) -> Void = { _ in }) {
        self.path = path
        self.notice = notice
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.lock = StoreLockFile(path: path + ".lock")
        self.daemonLock = StoreLockFile(path: path + ".daemon.lock")
        self.sessions = SessionFile(path: path + ".sessions")
        self.accountSessions = path == ":memory:" ? SessionDatabase(path: ":memory:", former: nil)
            : SessionDatabase(path: path + ".sessions.sqlite", former: sessions)
    }

    /// Opens the database, turns on WAL and applies migrations.
    ///
    /// The file and its side files end up mode 0600 whatever was there before. A store path
    /// that is a symbolic link is refused: the file is created and made private only where
    /// the config says.
    ///
    /// - Parameter create: create the file when it does not exist; when `false`, a missing
    ///   file is `.notFound` ("nothing synced yet") and nothing is created.
    /// - Throws: ``ServiceError`` `.storage` naming the path and the reason.
    public func open(create: Bool = true) throws {
        guard database == nil else { return }
        if path != ":memory:" { try preparePrivateFile(create: create) }
        database = try storage("opening the store \(path)") {
            let db = try SQLiteDatabase(path: path)
            db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
            // Switching a new file to WAL takes an exclusive lock and does not wait for one, so
            // processes opening a fresh store together take turns here.
            try db.retryingWhileBusy(for: TimeInterval(busyTimeoutMilliseconds) / 1000) {
                try db.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
                try Migration.migrate(db, sessions: sessions, now: millisecondsSince1970(Date())) { [path, notice] what in
                    notice("upgrading the store \(path): \(what)")
                }
            }
            if path != ":memory:" {
                for suffix in ["-wal", "-shm"] { _ = chmod(path + suffix, 0o600) }
            }
            return db
        }
    }

    /// Makes sure the database file is a private regular file at `path`, creating it if allowed.
    private func preparePrivateFile(create: Bool) throws {
        let operation = "opening the store \(path)"
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT != S_IFLNK else {
                throw ServiceError(.storage, operation, "it is a symbolic link; name the real file in store.path")
            }
            guard info.st_mode & S_IFMT == S_IFREG else { throw ServiceError(.storage, operation, "it is not a regular file") }
        } else if errno == ENOENT {
            guard create else { throw ServiceError(.notFound, operation, "nothing synced yet: run feedsync pull") }
            let folder = (path as NSString).deletingLastPathComponent
            var isFolder: ObjCBool = false
            guard folder.isEmpty || (FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue) else {
                throw ServiceError(.storage, operation, "the folder \(folder) does not exist")
            }
            let fd = Glibc.open(path, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw ServiceError(.storage, operation, systemReason(errno)) }
            Glibc.close(fd)
        } else {
            throw ServiceError(.storage, operation, systemReason(errno))
        }
        // Whatever mode the file had (an empty 0644 file someone made), it holds the mirror.
        guard chmod(path, 0o600) == 0 else {
            throw ServiceError(.storage, operation, "cannot make it private (chmod 600): \(systemReason(errno))")
        }
    }

    /// Closes the connection; later calls fail until ``open()`` is called again.
    public func close() {
        database = nil
        accountSessions.close()
    }

    /// Runs `body` on the open connection, translating SQLite failures into ``ServiceError``.
    func storage<T>(_ operation: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw ServiceError(.storage, operation(), error.description)
        } catch let error as MissingColumn {
            throw ServiceError(.storage, operation(), error.description)
        }
    }

    func db(_ operation: @autoclosure () -> String) throws -> SQLiteDatabase {
        guard let database else { throw ServiceError(.storage, operation(), "the store \(path) is not open") }
        return database
    }

    public func cursor(ofFeed feed: String) throws -> FeedCursor? {
        let db = try db("reading the cursor of feed \(feed)")
        return try storage("reading the cursor of feed \(feed)") {
            try db.statement("SELECT cursor, cursor_validator FROM feeds WHERE name = ?").query([.text(feed)]) { row in
                row.string(0).map { FeedCursor(position: $0, validator: row.string(1)) }
            }.first ?? nil
        }
    }

    public func backend(ofFeed feed: String) throws -> String? {
        let db = try db("reading the backend of feed \(feed)")
        return try storage("reading the backend of feed \(feed)") {
            try db.statement("SELECT backend FROM feeds WHERE name = ?").query([.text(feed)]) { $0.string(0) }.first ?? nil
        }
    }

    public func setBackend(_ backend: String, ofFeed feed: String) throws {
        let db = try db("recording the backend of feed \(feed)")
        try storage("recording the backend of feed \(feed)") {
            try db.statement("""
                INSERT INTO feeds (name, backend) VALUES (?1, ?2)
                ON CONFLICT (name) DO UPDATE SET backend = ?2 WHERE feeds.backend IS NOT ?2
                """).run([.text(feed), .text(backend)])
        }
    }

    public func videosToResolve(among ids: [VideoID], inFeed feed: String) throws -> [VideoID] {
        let db = try db("looking up videos of feed \(feed)")
        return try storage("looking up videos of feed \(feed)") {
            // One primary-key probe per id, all in one read transaction. An `IN (json_each(?))`
            // query builds a temporary b-tree on every call, which perf showed costing more.
            let resolved = try db.statement("SELECT 1 FROM videos WHERE feed = ?1 AND id = ?2 AND resolved = 1")
            return try db.withReadTransaction {
                try resolved.bind(feed, at: 1)
                return try ids.filter { id in
                    try resolved.bind(id.rawValue, at: 2)
                    defer { resolved.reset() }
                    return try !resolved.step()
                }
            }
        }
    }

    public func unresolvedVideoIDs(inFeed feed: String, limit: Int) throws -> [VideoID] {
        let db = try db("listing unresolved videos of feed \(feed)")
        return try storage("listing unresolved videos of feed \(feed)") {
            try db.statement("SELECT id FROM videos WHERE feed = ? AND resolved = 0 ORDER BY id LIMIT ?")
                .query([.text(feed), .integer(limit)]) { VideoID($0.string(0) ?? "") }
        }
    }

    /// A page with its rows already encoded.
    private struct EncodedPage: PreparedPage {
        let page: FeedPage
        let rows: PageRows
    }

    /// Encodes the page's rows on the caller's task, so that work is not on the store's.
    public nonisolated func prepare(_ page: FeedPage) -> any PreparedPage {
        EncodedPage(page: page, rows: PageRows(page.changes))
    }

    public func apply(_ prepared: any PreparedPage, videos: [Video], toFeed feed: String) throws -> PageWriteResult {
        let db = try db("committing a page of feed \(feed)")
        let page = prepared.page
        let rows = (prepared as? EncodedPage)?.rows ?? PageRows(page.changes)
        return try storage("committing a page of feed \(feed)") {
            try db.withTransaction {
                // Looked up once per page rather than once per row: the cache is keyed by the SQL text.
                let statements = try PageStatements(db)
                var result = try rows.buffer.withPinned { pinned in
                    defer { statements.clearBindings() }
                    try statements.bindFeed(feed)
                    return try write(rows, pinned: pinned, with: statements, in: db)
                }
                for video in videos {
                    try upsert(VideoColumns(video), feed: feed, in: db)
                    result.rowsWritten += db.changes
                }
                try db.statement("""
                    INSERT INTO feeds (name, cursor, cursor_validator) VALUES (?1, ?2, ?3)
                    ON CONFLICT (name) DO UPDATE SET cursor = ?2, cursor_validator = ?3
                    WHERE feeds.cursor IS NOT ?2 OR feeds.cursor_validator IS NOT ?3
                    """).run([.text(feed), .text(page.nextCursor.position), .text(page.nextCursor.validator)])
                result.rowsWritten += db.changes
                return result
            }
        }
    }

    /// Writes a page's rows: a placeholder for each video id it refers to, its authors, then its
    /// upserts and deletions in the page's order (a post is inserted, or rewritten only when a
    /// column differs). Triggers keep the search index and post_videos in step.
    ///
    /// `rowsWritten` counts the mirror's rows these statements wrote, not the index entries
    /// their triggers maintain.
    private func write(_ rows: PageRows, pinned: PinnedRows, with statements: PageStatements,
                       in db: SQLiteDatabase) throws -> PageWriteResult {
        var result = PageWriteResult()
        // Video placeholders first, so a new post links to its videos as it is inserted.
        for id in rows.videoIDs {
            try statements.insertVideoID.bind(id ..< id + 1, of: pinned, from: 2)
            try statements.insertVideoID.execute()
            result.rowsWritten += db.changes
        }
        // Each author's key, handle and name as stored (a stored profile newer than the page's
        // stays), looked up once per page and bound to every post of theirs: 3 values per slot.
        var authors = RowBuffer(reservingValues: rows.users.count * 3, bytes: rows.users.count * 32)
        for user in rows.users {
            try statements.upsertUser.bind(user ..< user + PageRows.userWidth, of: pinned, from: 2)
            try statements.upsertUser.execute()
            result.rowsWritten += db.changes
            try statements.selectUser.bind(user ..< user + 1, of: pinned, from: 2)
            defer { statements.selectUser.reset() }
            if try statements.selectUser.step() {
                statements.selectUser.appendColumns(0 ..< 3, to: &authors)
            } else {
                for _ in 0 ..< 3 { authors.append(nil as Int64?) }
            }
        }
        return try authors.withPinned { authorValues in
            defer { statements.insertPost.clearBindings() }
            return try writePosts(rows, pinned: pinned, authors: authorValues, with: statements, in: db, result: result)
        }
    }

    private func writePosts(_ rows: PageRows, pinned: PinnedRows, authors: PinnedRows, with statements: PageStatements,
                            in db: SQLiteDatabase, result: PageWriteResult) throws -> PageWriteResult {
        var result = result
        // Keys of the posts inserted and not yet in the search index. They are indexed in one
        // statement, before any update or deletion (whose triggers unindex the old text) and at
        // the end of the page. New rows take consecutive keys, so the statement is most often
        // over a range of keys rather than a list.
        var unindexed: [Int64] = []
        func index() throws {
            guard let first = unindexed.first, let last = unindexed.last else { return }
            if last - first + 1 == Int64(unindexed.count), zip(unindexed, unindexed.dropFirst()).allSatisfy({ $1 == $0 + 1 }) {
                try statements.indexPostRange.bind(first, at: 1)
                try statements.indexPostRange.bind(last, at: 2)
                try statements.indexPostRange.execute()
            } else {
                try statements.indexPosts.bind(JSONStringArray.encode(unindexed.map(String.init), dialect: .sqlite), at: 1)
                try statements.indexPosts.execute()
            }
            unindexed.removeAll(keepingCapacity: true)
        }
        for step in rows.steps {
            switch step {
            case .upsert(let start, let author, let reposter):
                let values = start ..< start + PageRows.postWidth
                try statements.insertPost.bind(values, of: pinned, from: 2)
                // After the feed and the post's own columns: the author's key, handle and name, then the reposter's key.
                let authorParameter = Int32(PageRows.postWidth + 2)
                try statements.insertPost.bind(author * 3 ..< author * 3 + 3, of: authors, from: authorParameter)
                if let reposter {
                    try statements.insertPost.bind(reposter * 3 ..< reposter * 3 + 1, of: authors, from: authorParameter + 3)
                } else {
                    try statements.insertPost.bindNull(at: authorParameter + 3)
                }
                try statements.insertPost.execute()
                if db.changes == 1 {
                    result.inserted += 1
                    unindexed.append(db.lastInsertRowID)
                } else {
                    try index()
                    try statements.updatePost.bind(values, of: pinned, from: 2)
                    try statements.updatePost.execute()
                    if db.changes == 1 { result.updated += 1 } else { result.unchanged += 1 }
                }
                result.rowsWritten += db.changes
            case .delete(let id):
                try index()
                try statements.deletePost.bind(id ..< id + 1, of: pinned, from: 2)
                try statements.deletePost.execute()
                result.deleted += db.changes
                result.rowsWritten += db.changes
            }
        }
        try index()
        return result
    }

    /// The statements a page commit runs for each row. Parameter 1 is always the feed.
    private struct PageStatements {
        let insertPost, updatePost, upsertUser, selectUser, insertVideoID, deletePost: SQLiteStatement
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

        private var all: [SQLiteStatement] { [insertPost, updatePost, upsertUser, selectUser, insertVideoID, deletePost] }

        func bindFeed(_ feed: String) throws {
            for statement in all { try statement.bind(feed, at: 1) }
        }

        /// Run before the page's rows are unpinned: the statements bound their text in place.
        func clearBindings() {
            for statement in all { statement.clearBindings() }
        }
    }

    private func upsert(_ row: VideoColumns, feed: String, in db: SQLiteDatabase) throws {
        try db.statement("""
            INSERT INTO videos (feed, id, resolved, title, duration_ms, stream_url, thumbnail_url, size_bytes, width, height, fps,
                view_count, rating)
            VALUES (?1, ?2, 1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            ON CONFLICT (feed, id) DO UPDATE SET resolved = 1, title = ?3, duration_ms = ?4, stream_url = ?5,
                thumbnail_url = ?6, size_bytes = ?7, width = ?8, height = ?9, fps = ?10, view_count = ?11, rating = ?12
            WHERE videos.resolved = 0 OR videos.title IS NOT ?3 OR videos.duration_ms IS NOT ?4
                OR videos.stream_url IS NOT ?5 OR videos.thumbnail_url IS NOT ?6 OR videos.size_bytes IS NOT ?7
                OR videos.width IS NOT ?8 OR videos.height IS NOT ?9 OR videos.fps IS NOT ?10
                OR videos.view_count IS NOT ?11 OR videos.rating IS NOT ?12
            """).run([.text(feed), .text(row.id), .text(row.title), .integer(row.durationMs), .text(row.streamURL),
                      .text(row.thumbnailURL), .integer(row.sizeBytes), .integer(row.width), .integer(row.height), .real(row.fps),
                      .integer(row.viewCount), .real(row.rating)])
    }

    /// The ids of the feed's cached posts the walk did not see.
    private func unseenIDs(of walk: FullWalk, in db: SQLiteDatabase) throws -> (unseen: [String], cached: Int) {
        let cached = try db.statement("SELECT id FROM posts WHERE feed = ?").query([.text(walk.feed)]) { $0.string(0) ?? "" }
        return (cached.filter { !walk.seen.contains(PostID($0)) }, cached.count)
    }

    public func unseenPosts(of walk: FullWalk) throws -> (unseen: Int, cached: Int) {
        let db = try db("counting posts of feed \(walk.feed)")
        return try storage("counting posts of feed \(walk.feed)") {
            try db.withReadTransaction {
                let (unseen, cached) = try unseenIDs(of: walk, in: db)
                return (unseen.count, cached)
            }
        }
    }

    public func deleteUnseenPosts(of walk: FullWalk) throws -> Int {
        let db = try db("finishing the full sync of feed \(walk.feed)")
        return try storage("finishing the full sync of feed \(walk.feed)") {
            try db.withTransaction {
                let delete = try db.statement("DELETE FROM posts WHERE feed = ?1 AND id = ?2")
                var deleted = 0
                for id in try unseenIDs(of: walk, in: db).unseen {
                    try delete.run([.text(walk.feed), .text(id)])
                    deleted += db.changes
                }
                return deleted
            }
        }
    }

    public func saveVideos(_ videos: [Video], inFeed feed: String) throws -> Int {
        let db = try db("saving videos of feed \(feed)")
        return try storage("saving videos of feed \(feed)") {
            try db.withTransaction {
                let before = db.totalChanges
                for video in videos { try upsert(VideoColumns(video), feed: feed, in: db) }
                return db.totalChanges - before
            }
        }
    }

    public func recordSync(_ outcome: SyncOutcome, ofFeed feed: String) throws {
        let db = try db("recording the sync of feed \(feed)")
        try storage("recording the sync of feed \(feed)") {
            try db.withTransaction {
                let finished = millisecondsSince1970(outcome.finishedAt)
                let report = outcome.report
                try db.statement("""
                    INSERT INTO sync_runs (feed, started_at, finished_at, error, new_posts, updated_posts, deleted_posts,
                                           skipped_items, pages, requests, rows_written)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).run([.text(feed), .integer(millisecondsSince1970(outcome.startedAt)), .integer(finished), .text(outcome.error),
                              .integer(report?.newPosts), .integer(report?.updatedPosts), .integer(report?.deletedPosts),
                              .integer(report?.skippedItems), .integer(report?.pages), .integer(report?.requests),
                              .integer(report?.rowsWritten)])
                if let error = outcome.error {
                    try db.statement("""
                        INSERT INTO feeds (name, last_error_at, last_error, consecutive_failures) VALUES (?1, ?2, ?3, 1)
                        ON CONFLICT (name) DO UPDATE SET last_error_at = ?2, last_error = ?3,
                            consecutive_failures = consecutive_failures + 1
                        """).run([.text(feed), .integer(finished), .text(error)])
                } else {
                    let polling = report?.polling
                    // Only a walk that would sweep says anything new about the sweep.
                    try db.statement("""
                        INSERT INTO feeds (name, last_success_at, location, polling_stopped, sweep_withheld, discovered_from)
                        VALUES (?1, ?2, ?3, ?4, ?6, ?7)
                        ON CONFLICT (name) DO UPDATE SET last_success_at = ?2, consecutive_failures = 0,
                            location = ?3, polling_stopped = ?4, sweep_withheld = CASE WHEN ?5 THEN ?6 ELSE sweep_withheld END,
                            discovered_from = ?7
                        """).run([.text(feed), .integer(finished), .text(polling?.location), .text(polling?.stopped),
                                  .integer(report?.walkedToSweep == true ? 1 : 0), .text(report?.sweepWithheld),
                                  .text(polling?.discoveredFrom)])
                }
            }
        }
    }

    public func feedStatuses() throws -> [FeedStatus] {
        let db = try db("reading feed status")
        return try storage("reading feed status") {
            try db.statement("""
                SELECT f.name, f.cursor, f.cursor_validator, f.last_success_at, f.last_error_at, f.last_error,
                       f.consecutive_failures, f.next_attempt_at, (SELECT COUNT(*) FROM posts p WHERE p.feed = f.name),
                       f.location, f.polling_stopped, f.sweep_withheld, f.discovered_from
                FROM feeds f ORDER BY f.name
                """).query { row in
                FeedStatus(feed: row.string(0) ?? "", cursor: row.string(1).map { FeedCursor(position: $0, validator: row.string(2)) },
                           lastSuccessAt: row.optionalInt64(3).map(Date.init(milliseconds:)),
                           lastErrorAt: row.optionalInt64(4).map(Date.init(milliseconds:)),
                           lastError: row.string(5), consecutiveFailures: Int(row.int64(6)),
                           nextAttemptAt: row.optionalInt64(7).map(Date.init(milliseconds:)), postCount: Int(row.int64(8)),
                           location: row.string(9), discoveredFrom: row.string(12), pollingStopped: row.string(10),
                           sweepWithheld: row.string(11))
            }
        }
    }

    public func setRead(_ read: Bool, postID: PostID, inFeed feed: String?) throws -> [String] {
        let db = try db("marking post \(postID)")
        return try storage("marking post \(postID)") {
            try db.withTransaction {
                let feeds = try db.statement("SELECT feed FROM posts WHERE id = ?1 AND (?2 IS NULL OR feed = ?2) ORDER BY feed")
                    .query([.text(postID.rawValue), .text(feed)]) { $0.string(0) ?? "" }
                guard feeds.count == 1 else { return feeds }
                let values: [SQLiteValue] = [.text(feeds[0]), .text(postID.rawValue), .integer(millisecondsSince1970(Date()))]
                if read {
                    try db.statement("""
                        INSERT INTO post_state (feed, post_id, read_at) VALUES (?1, ?2, ?3)
                        ON CONFLICT DO UPDATE SET read_at = ?3 WHERE post_state.read_at IS NULL
                        """).run(values)
                } else {
                    try db.statement("UPDATE post_state SET read_at = NULL WHERE feed = ?1 AND post_id = ?2").run(Array(values.prefix(2)))
                }
                return feeds
            }
        }
    }

    public func setNextAttempt(_ date: Date?, ofFeed feed: String) throws {
        let db = try db("scheduling feed \(feed)")
        try storage("scheduling feed \(feed)") {
            try db.statement("""
                INSERT INTO feeds (name, next_attempt_at) VALUES (?1, ?2)
                ON CONFLICT (name) DO UPDATE SET next_attempt_at = ?2 WHERE feeds.next_attempt_at IS NOT ?2
                """).run([.text(feed), .integer(date.map(millisecondsSince1970))])
        }
    }
}
