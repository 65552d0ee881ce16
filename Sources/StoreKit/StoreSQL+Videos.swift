import Core
import Foundation

/// The video cache: which of a feed's videos wait to be resolved, and how a resolved one is written.
extension StoreSQL {
    /// The resolved columns, in ``VideoColumns/names`` order, but the key.
    public static let resolvedVideoColumns = VideoColumns.names.filter { $0 != "id" }

    private static let videoUpsert = Shared("""
        ON CONFLICT (feed, id) DO UPDATE SET resolved = 1, \
        \(resolvedVideoColumns.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
        WHERE videos.resolved = 0 OR \(resolvedVideoColumns.map { "videos.\($0) IS DISTINCT FROM excluded.\($0)" }.joined(separator: " OR "))
        """)

    /// What follows a store's `INSERT INTO videos (feed, id, resolved, …)` of resolved videos:
    /// the row is marked resolved with its details, and one already so is not rewritten.
    public var videoUpsert: String { Self.videoUpsert[dialect] }

    private static let unresolvedVideoIDs = Shared("SELECT id FROM videos WHERE feed = $1 AND resolved = 0 ORDER BY id LIMIT $2")

    /// Up to `limit` of the feed's videos still to resolve, by id.
    public func unresolvedVideoIDs(inFeed feed: String, limit: Int) -> StoreQuery<VideoID> {
        query(Self.unresolvedVideoIDs, [.text(feed), .integer(limit)]) { VideoID($0.text(0) ?? "") }
    }
}
