import Core
import Foundation
import StoreKit

/// The video cache: which of a feed's videos are resolved, and their details.
extension PostgresFeedStore: VideoCache {
    public func videosToResolve(among ids: [VideoID], inFeed feed: String) throws -> [VideoID] {
        let resolved = Set(try run("looking up videos of feed \(feed)", """
            SELECT id FROM videos WHERE feed = $1 AND id = ANY($2::text[]) AND resolved = 1
            """, [feed, pgArray(ids.map(\.rawValue))]).compactMap { $0[0] })
        return ids.filter { !resolved.contains($0.rawValue) }
    }

    public func saveVideos(_ videos: [Video], under lease: FeedLease) throws -> Int {
        guard !videos.isEmpty else { return 0 }
        let feed = lease.feed
        return try fenced(lease, "saving videos of feed \(feed)") { db in try upsertVideos(videos, feed: feed, in: db) }
    }

    private func upsertVideos(_ videos: [Video], feed: String, in db: PostgresConnection) throws -> Int {
        let upsert = videoUpsert(videos, feed: feed)
        return try db.query(upsert.sql, upsert.parameters).count
    }

    /// Resolved videos from a `jsonb` array of ``VideoColumns`` (`$2`), each column of its type.
    private static let upsertVideos = """
        INSERT INTO videos (feed, id, resolved, \(StoreSQL.resolvedVideoColumns.joined(separator: ", ")))
        SELECT $1, r.id, 1, \(StoreSQL.resolvedVideoColumns.map { "r.\($0)" }.joined(separator: ", "))
        FROM jsonb_to_recordset($2::jsonb) AS r(\(VideoColumns.columns.map { "\($0.name) \($0.kind.postgresType)" }.joined(separator: ", ")))
        \(sql.videoUpsert)
        RETURNING 1
        """

    /// Marks `videos` resolved with their details; one row per video written.
    nonisolated func videoUpsert(_ videos: [Video], feed: String) -> PostgresConnection.Statement {
        (Self.upsertVideos, [feed, jsonText(videos.map(VideoColumns.init))])
    }
}
