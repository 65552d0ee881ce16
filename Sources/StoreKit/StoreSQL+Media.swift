import Core
import Foundation

/// The media archive's rows (``Core/MediaLedger``): `media`, one row an address, and
/// `media_refs`, which post of which feed refers to it.
extension StoreSQL {
    static let mediaColumns = "url, kind, expected_type, expected_bytes, digest, bytes, media_type, fetched_at, status, reason, attempts"

    private static let addMedia = Shared("""
        INSERT INTO media (url, kind, expected_type, expected_bytes, status, attempts, posted_at, seen_at)
        VALUES ($1, $2, $3, $4, 'pending', 0, $5, $6)
        ON CONFLICT (url) DO UPDATE SET posted_at = excluded.posted_at WHERE media.posted_at < excluded.posted_at
        """)
    private static let addReference = Shared("""
        INSERT INTO media_refs (feed, post_id, url, posted_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (feed, post_id, url) DO NOTHING
        """)
    private static let due = Shared("""
        SELECT \(mediaColumns), (SELECT MIN(r.feed) FROM media_refs r WHERE r.url = media.url) FROM media
        WHERE status = 'pending' OR (status = 'failed' AND attempts < $1) OR ($2 = 1 AND status = 'skipped')
        ORDER BY posted_at DESC, url LIMIT $3
        """)
    private static let outcome = Shared("""
        UPDATE media SET digest = $2, path = $3, bytes = $4, media_type = $5, fetched_at = $6, status = $7, reason = $8, attempts = $9
        WHERE url = $1
        """)
    private static let statusCounts = Shared("SELECT status, COUNT(*) FROM media GROUP BY status ORDER BY status")
    private static let fileTotals = Shared("""
        SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM (SELECT digest, MAX(bytes) AS bytes FROM media
                                                       WHERE status = 'fetched' AND digest IS NOT NULL GROUP BY digest) files
        """)
    private static let holdings = Shared("""
        SELECT m.url, m.digest, m.bytes, r.feed, r.posted_at, CASE WHEN s.starred_at IS NULL THEN 0 ELSE 1 END
        FROM media m JOIN media_refs r ON r.url = m.url
        LEFT JOIN post_state s ON s.feed = r.feed AND s.post_id = r.post_id
        WHERE m.status = 'fetched' AND m.digest IS NOT NULL
        ORDER BY m.url, r.feed, r.post_id
        """)
    private static let unreferenced = Shared("""
        SELECT \(mediaColumns) FROM media m WHERE NOT EXISTS (SELECT 1 FROM media_refs r WHERE r.url = m.url) ORDER BY url
        """)
    private static let rowsWithDigest = Shared("SELECT COUNT(*) FROM media WHERE digest = $1")
    private static let removeMedia = Shared("DELETE FROM media WHERE url = $1")

    /// The statements that record one reference: the address's row (if new), then the link.
    public func recordMedia(_ reference: MediaReference, at now: Date) -> [StoreStatement] {
        let item = reference.item
        let posted = SQLValue.integer(StoredTime.milliseconds(reference.postedAt))
        return [
            statement(Self.addMedia, [.text(item.url.absoluteString), .text(item.kind.rawValue), .text(item.expectedType),
                                      .integer(item.expectedBytes), posted, .integer(StoredTime.milliseconds(now))]),
            statement(Self.addReference, [.text(reference.feed), .text(reference.postID.rawValue), .text(item.url.absoluteString), posted]),
        ]
    }

    /// The items worth an attempt, those of the newest posts first.
    public func mediaDue(limit: Int, includingSkipped: Bool) -> StoreQuery<(item: MediaItem, feed: String?)?> {
        query(Self.due, [.integer(MediaItem.maxAttempts), .integer(includingSkipped ? 1 : 0), .integer(limit)]) { row in
            Self.mediaItem(row).map { ($0, row.text(11)) }
        }
    }

    /// Writes an item's outcome to its row.
    public func recordMediaOutcome(_ item: MediaItem) -> StoreStatement {
        statement(Self.outcome, [.text(item.url.absoluteString), .text(item.digest), .text(item.localPath), .integer(item.bytes),
                                 .text(item.mediaType), .integer(item.fetchedAt.map(StoredTime.milliseconds)), .text(item.status.rawValue),
                                 .text(item.reason), .integer(item.attempts)])
    }

    /// Rows by status.
    public func mediaStatusCounts() -> StoreQuery<(String, Int)> {
        query(Self.statusCounts, []) { ($0.text(0) ?? "", Int(clamping: $0.integer(1) ?? 0)) }
    }

    /// Distinct fetched files and their bytes.
    public func mediaFileTotals() -> StoreQuery<(files: Int, bytes: Int64)> {
        query(Self.fileTotals, []) { (Int(clamping: $0.integer(0) ?? 0), $0.integer(1) ?? 0) }
    }

    /// Every fetched item with each post referring to it.
    public func mediaHoldings() -> StoreQuery<MediaHolding?> {
        query(Self.holdings, []) { row in
            guard let url = row.text(0).flatMap(URL.init(string:)), let digest = row.text(1), let feed = row.text(3) else { return nil }
            return MediaHolding(url: url, digest: digest, bytes: row.integer(2) ?? 0, feed: feed,
                                postedAt: StoredTime.date(row.integer(4) ?? 0), starred: row.integer(5) == 1)
        }
    }

    /// The items no reference points at.
    public func unreferencedMedia() -> StoreQuery<MediaItem?> { query(Self.unreferenced, [], row: Self.mediaItem) }

    /// How many rows hold `digest`.
    public func mediaRows(withDigest digest: String) -> StoreQuery<Int> {
        query(Self.rowsWithDigest, [.text(digest)]) { Int(clamping: $0.integer(0) ?? 0) }
    }

    /// Deletes the row of `url`.
    public func removeMedia(_ url: URL) -> StoreStatement { statement(Self.removeMedia, [.text(url.absoluteString)]) }

    /// A row of ``mediaColumns``; `nil` for one whose address or kind no longer reads (another tool's).
    @Sendable static func mediaItem(_ row: any ResultRow) -> MediaItem? {
        guard let url = row.text(0).flatMap(URL.init(string:)), let kind = row.text(1).flatMap(MediaKind.init(rawValue:)) else { return nil }
        return MediaItem(url: url, kind: kind, expectedType: row.text(2), expectedBytes: row.integer(3), digest: row.text(4),
                         bytes: row.integer(5), mediaType: row.text(6), fetchedAt: row.integer(7).map(StoredTime.date),
                         status: row.text(8).flatMap(MediaStatus.init(rawValue:)) ?? .pending, reason: row.text(9),
                         attempts: Int(clamping: row.integer(10) ?? 0))
    }
}
