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

    public func unresolvedVideoIDs(inFeed feed: String, limit: Int) throws -> [VideoID] {
        try run("listing unresolved videos of feed \(feed)", "SELECT id FROM videos WHERE feed = $1 AND resolved = 0 ORDER BY id LIMIT $2",
                [feed, "\(limit)"]).map { VideoID($0[0] ?? "") }
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

    /// Marks `videos` resolved with their details; one row per video written.
    nonisolated func videoUpsert(_ videos: [Video], feed: String) -> PostgresConnection.Statement {
        ("""
            INSERT INTO videos (feed, id, resolved, title, duration_ms, stream_url, thumbnail_url, size_bytes, width, height, fps,
                view_count, rating)
            SELECT $1, r.id, 1, r.title, r.duration_ms, r.stream_url, r.thumbnail_url, r.size_bytes, r.width, r.height, r.fps,
                r.view_count, r.rating
            FROM jsonb_to_recordset($2::jsonb) AS r(id text, title text, duration_ms bigint, stream_url text, thumbnail_url text,
                 size_bytes bigint, width bigint, height bigint, fps double precision, view_count bigint, rating double precision)
            ON CONFLICT (feed, id) DO UPDATE SET resolved = 1, title = excluded.title, duration_ms = excluded.duration_ms,
                stream_url = excluded.stream_url, thumbnail_url = excluded.thumbnail_url, size_bytes = excluded.size_bytes,
                width = excluded.width, height = excluded.height, fps = excluded.fps, view_count = excluded.view_count,
                rating = excluded.rating
            WHERE (videos.resolved, videos.title, videos.duration_ms, videos.stream_url, videos.thumbnail_url, videos.size_bytes,
                   videos.width, videos.height, videos.fps, videos.view_count, videos.rating) IS DISTINCT FROM
                  (1, excluded.title, excluded.duration_ms, excluded.stream_url, excluded.thumbnail_url, excluded.size_bytes,
                   excluded.width, excluded.height, excluded.fps, excluded.view_count, excluded.rating)
            RETURNING 1
            """, [feed, jsonText(videos.map(VideoColumns.init))])
    }
}
