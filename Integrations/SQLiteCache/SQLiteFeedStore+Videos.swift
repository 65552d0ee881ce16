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

    public func saveVideos(_ videos: [Video], under lease: FeedLease) throws -> Int {
        // SQLite's lease is this process's lock on the file, which it cannot lose (see `apply`).
        let feed = lease.feed
        let db = try db("saving videos of feed \(feed)")
        return try storage("saving videos of feed \(feed)") {
            try db.withTransaction {
                // Each statement's own rows: the total would count the feed counter's trigger (migration 021) too.
                var written = 0
                for video in videos {
                    try upsert(VideoColumns(video), feed: feed, in: db)
                    written += db.changes
                }
                return written
            }
        }
    }

    private static let upsertVideo = """
        INSERT INTO videos (feed, id, resolved, \(StoreSQL.resolvedVideoColumns.joined(separator: ", ")))
        VALUES (?1, ?2, 1, \((3 ... VideoColumns.names.count + 1).map { "?\($0)" }.joined(separator: ", ")))
        \(sql.videoUpsert)
        """

    /// Marks the video resolved with its details; an unchanged row is not rewritten.
    func upsert(_ row: VideoColumns, feed: String, in db: SQLiteDatabase) throws {
        try db.statement(Self.upsertVideo).run([
            .text(feed), .text(row.id), .text(row.title), .integer(row.durationMs), .text(row.streamURL), .text(row.thumbnailURL),
            .integer(row.sizeBytes), .integer(row.width), .integer(row.height), .real(row.fps), .integer(row.viewCount), .real(row.rating),
            .integer(row.likeCount), .text(row.author),
        ])
    }
}
