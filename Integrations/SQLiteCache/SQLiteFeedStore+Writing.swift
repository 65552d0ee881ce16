import Core
import Foundation
import StoreKit

/// The write path: each page committed whole with its cursor, alone or in one transaction with
/// the pages a sync has waiting behind it, its rows bound in place from the page's ``RowBuffer``.
extension SQLiteFeedStore {
    /// Encodes the page's rows on the caller's task, so that work is not on the store's.
    public nonisolated func prepare(_ page: FeedPage) -> SQLitePreparedPage { SQLitePreparedPage(page) }

    /// Pages a sync has waiting commit together, up to this many: a commit has costs of its
    /// own, whatever the page holds (its `BEGIN` and `COMMIT`, the WAL frames of the b-tree pages
    /// every page touches, a new segment of the search index), and they weigh on small pages.
    /// Over a 20,000-status Mastodon walk of 40-status pages, SQLite alone took 0.91–0.95 s at
    /// one page per transaction, 0.71–0.82 s at two and 0.70–0.73 s at three
    /// (`Benchmarks/sqlite_floor.c`, issue 40). A sync holds few enough pages that a transaction
    /// stays short: at most 12, and past the first three only while they hold fewer than 1,000
    /// posts and 8 MiB.
    public nonisolated var pagesPerTransaction: Int { 8 }

    /// Commits the page under the store's write lock, which the lease is a hold on: the kernel
    /// keeps it for this process until it is given back, so no other process can take it over
    /// meanwhile, and the commit needs no check of it.
    public func apply(_ prepared: SQLitePreparedPage, videos: [Video], under lease: FeedLease,
                      announcing announcer: (any PageAnnouncer)?) throws -> PageWriteResult {
        try commit([(prepared, videos)], under: lease, announcing: announcer)[0]
    }

    /// Commits the pages in one transaction, in order, under the store's write lock (as
    /// ``apply(_:videos:under:announcing:)``). `async`, though it never suspends, so that a caller
    /// holding the store by its own type calls this rather than the protocol's default.
    public func apply(_ pages: [(page: SQLitePreparedPage, videos: [Video])], under lease: FeedLease,
                      announcing announcer: (any PageAnnouncer)?) async throws -> [PageWriteResult] {
        try commit(pages, under: lease, announcing: announcer)
    }

    private func commit(_ pages: [(page: SQLitePreparedPage, videos: [Video])], under lease: FeedLease,
                        announcing announcer: (any PageAnnouncer)?) throws -> [PageWriteResult] {
        let feed = lease.feed
        let operation = pages.count == 1 ? "committing a page of feed \(feed)" : "committing \(pages.count) pages of feed \(feed)"
        let db = try db(operation)
        return try storage(operation) {
            try db.withPageTransaction {
                // Looked up once per transaction rather than once per row: the cache is keyed by the SQL text.
                let statements = try PageStatements(db)
                var newPosts = NewPosts()
                var results: [PageWriteResult] = []
                for (page, videos) in pages {
                    results.append(try write(page, videos: videos, feed: feed, with: statements, announcing: announcer, newPosts: &newPosts, in: db))
                }
                try newPosts.complete(statements, feed: feed)
                return results
            }
        }
    }

    /// Writes one page of a transaction: its rows, its videos, its cursor, renames and stream
    /// position, and the deliveries `announcer` makes of it.
    private func write(_ prepared: SQLitePreparedPage, videos: [Video], feed: String, with statements: PageStatements,
                       announcing announcer: (any PageAnnouncer)?, newPosts: inout NewPosts, in db: SQLiteDatabase) throws -> PageWriteResult {
        let (page, rows) = (prepared.page, prepared.rows)
        var result = try rows.buffer.withPinned { pinned in
            defer { statements.clearBindings() }
            try statements.bindFeed(feed)
            return try write(rows, pinned: pinned, with: statements, feed: feed, newPosts: &newPosts, in: db)
        }
        for video in videos {
            try upsert(VideoColumns(video), feed: feed, in: db)
            result.rowsWritten += db.changes
        }
        // A streamed batch has no cursor: the feed keeps the one its last poll committed.
        if let cursor = page.nextCursor { result.rowsWritten += try db.run(Self.sql.moveCursor(to: cursor, ofFeed: feed)) }
        // A rename rewrites the author's posts, through a trigger that takes their old text out of the search index.
        if !page.renames.isEmpty { try newPosts.complete(statements, feed: feed) }
        for rename in page.renames where try self.rename(rename, feed: feed, in: db) {
            result.renamed += 1
            result.rowsWritten += 1
        }
        if let position = page.streamPosition {
            try db.run(Self.sql.setStreamPosition(position, ofFeed: feed))
        }
        // Last, from what the page did, so they are committed with it or not at all.
        if let announcer {
            let (deliveries, due) = announcer.announcement(feed: feed, page: page, result: result)
            for delivery in deliveries { try db.run(Self.sql.enqueue(delivery, at: due)) }
        }
        return result
    }

    /// Writes a page's rows: a placeholder for each video id it refers to, its authors, then its
    /// upserts and deletions in the page's order (a post is inserted, or rewritten only when a
    /// column differs). The transaction's new posts enter the search index, are linked to their
    /// videos and are counted in the feed's version together (``NewPosts``); triggers keep all
    /// three in step for changes and deletions.
    ///
    /// `rowsWritten` counts the mirror's rows these statements wrote, not the index entries
    /// their triggers maintain.
    private func write(_ rows: PageRows, pinned: PinnedRows, with statements: PageStatements, feed: String,
                       newPosts: inout NewPosts, in db: SQLiteDatabase) throws -> PageWriteResult {
        var result = PageWriteResult()
        // An author's new handle or name is carried to their posts by a trigger (`users_au_profile`).
        if newPosts.mayRename(rows, pinned: pinned) { try newPosts.complete(statements, feed: feed) }
        // Video placeholders first, so the new posts find every video they link to.
        for id in rows.videoIDs {
            try statements.insertVideoID.bind(id ..< id + 1, of: pinned, from: 2)
            try statements.insertVideoID.execute()
            result.rowsWritten += db.changes
        }
        // Each author's key, handle and name for their posts, as their upsert returned them: no
        // read of what was just written. 3 values per slot.
        var authors = RowBuffer(reservingValues: rows.users.count * 3, bytes: rows.users.count * 32)
        for user in rows.users {
            try statements.upsertUser.bind(user ..< user + PageRows.userWidth, of: pinned, from: 2)
            defer { statements.upsertUser.reset() }
            if try statements.upsertUser.step() {
                // Written, unless the stored profile is newer than the page's and came back as it was.
                if case .integer(let pageTime) = pinned.values[user + PageRows.userProfileAt], pageTime == statements.upsertUser.int64(3) {
                    result.rowsWritten += 1
                }
                statements.upsertUser.appendColumns(0 ..< 3, to: &authors)
            } else {
                // Stored exactly as the page has them: the page's handle and name; the key the post finds.
                authors.append(nil as Int64?)
                authors.append(user + PageRows.userHandle, of: pinned)
                authors.append(user + PageRows.userDisplayName, of: pinned)
            }
        }
        return try authors.withPinned { authorValues in
            defer { statements.insertPost.clearBindings() }
            let written = try writePosts(rows, pinned: pinned, authors: authorValues, with: statements, feed: feed, newPosts: &newPosts,
                                         in: db, result: result)
            newPosts.endPage(rows, pinned: pinned, authors: authorValues)
            return written
        }
    }

    /// Inserts the page's new posts (noted in `newPosts`, which the transaction completes), and
    /// rewrites or deletes the others, once `newPosts` is complete: the triggers of an update or
    /// deletion take the old text out of the search index.
    private func writePosts(_ rows: PageRows, pinned: PinnedRows, authors: PinnedRows, with statements: PageStatements, feed: String,
                            newPosts: inout NewPosts, in db: SQLiteDatabase, result: PageWriteResult) throws -> PageWriteResult {
        var result = result
        let linking = !rows.videoIDs.isEmpty
        for (position, step) in rows.steps.enumerated() {
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
                    result.insertedIDs.append(rows.ids[position])
                    newPosts.append(db.lastInsertRowID, author: author, linking: linking)
                } else {
                    try newPosts.complete(statements, feed: feed)
                    try statements.updatePost.bind(values, of: pinned, from: 2)
                    try statements.updatePost.execute()
                    if db.changes == 1 {
                        result.updated += 1
                        result.updatedIDs.append(rows.ids[position])
                    } else {
                        result.unchanged += 1
                    }
                }
                result.rowsWritten += db.changes
            case .delete(let id):
                try newPosts.complete(statements, feed: feed)
                // A deleted post takes the entries that repost it along: two statements, so each
                // searches its own index (an OR of the two would scan the feed).
                for statement in [statements.deletePost, statements.deleteReposts] {
                    try statement.bind(id ..< id + 1, of: pinned, from: 2)
                    try statement.execute()
                    if statement === statements.deletePost, db.changes > 0 { result.deletedIDs.append(rows.ids[position]) }
                    result.deleted += db.changes
                    result.rowsWritten += db.changes
                }
            }
        }
        return result
    }
}
