import Core
import Foundation
import StoreKit

/// The video cache: which of a feed's videos are resolved, and their details.
extension SQLiteFeedStore {
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

    public func saveVideos(_ videos: [Video], under lease: FeedLease) throws -> Int {
        // SQLite's lease is this process's lock on the file, which it cannot lose (see `apply`).
        let feed = lease.feed
        let db = try db("saving videos of feed \(feed)")
        return try storage("saving videos of feed \(feed)") {
            try db.withTransaction {
                let before = db.totalChanges
                for video in videos { try upsert(VideoColumns(video), feed: feed, in: db) }
                return db.totalChanges - before
            }
        }
    }

    /// Marks the video resolved with its details; an unchanged row is not rewritten.
    func upsert(_ row: VideoColumns, feed: String, in db: SQLiteDatabase) throws {
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
}
