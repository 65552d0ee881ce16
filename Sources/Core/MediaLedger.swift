import Foundation

/// The store's role that keeps the media archive's rows (`media`, `media_refs`).
///
/// Rows name addresses and digests only; the files are the archive's (``MediaFetching``).
public protocol MediaLedger: Sendable {
    /// Records references to addresses, adding a `pending` row for each address not known yet;
    /// a known address keeps its row, a known reference is left as it is.
    func recordMedia(_ references: [MediaReference], at now: Date) async throws

    /// The items worth an attempt now: `pending`, or `failed` with fewer than
    /// ``MediaItem/maxAttempts`` attempts; `skipped` too when `includingSkipped`. At most
    /// `limit`, those of the newest posts first, each with the first feed (by name) referring to it.
    func mediaDue(limit: Int, includingSkipped: Bool) async throws -> [(item: MediaItem, feed: String?)]

    /// Writes items' outcomes (status, digest, bytes, reason, attempts) to their rows, in one transaction.
    func recordMediaOutcomes(_ items: [MediaItem]) async throws

    /// Counts and bytes, for `feedsync media status`, `status --json` and `/metrics`.
    func mediaSummary() async throws -> MediaSummary

    /// Every fetched item, with the feeds and posts referring to it: what room can be made from.
    func mediaHoldings() async throws -> [MediaHolding]

    /// The items no reference points at any more (their posts removed here, their feed purged).
    func unreferencedMedia() async throws -> [MediaItem]

    /// How many rows hold `digest` (one file serves them all).
    func mediaRows(withDigest digest: String) async throws -> Int

    /// Deletes the rows of these addresses.
    func removeMedia(_ urls: [URL]) async throws
}

/// The archive's counts and bytes.
public struct MediaSummary: Hashable, Sendable {
    /// Rows by status.
    public var counts: [MediaStatus: Int]
    /// Bytes of the distinct fetched files.
    public var bytes: Int64
    /// Distinct fetched files (the same bytes under two addresses are one).
    public var files: Int
    /// Rows skipped, or removed, for room under `maxBytes`.
    public var skippedForRoom: Int

    public init(counts: [MediaStatus: Int] = [:], bytes: Int64 = 0, files: Int = 0, skippedForRoom: Int = 0) {
        self.counts = counts
        self.bytes = bytes
        self.files = files
        self.skippedForRoom = skippedForRoom
    }

    /// Rows of `status`.
    public func count(_ status: MediaStatus) -> Int { counts[status, default: 0] }
}

/// A fetched item and one post referring to it.
public struct MediaHolding: Hashable, Sendable {
    public var url: URL
    public var digest: String
    public var bytes: Int64
    public var feed: String
    public var postedAt: Date
    public var starred: Bool

    public init(url: URL, digest: String, bytes: Int64, feed: String, postedAt: Date, starred: Bool) {
        self.url = url
        self.digest = digest
        self.bytes = bytes
        self.feed = feed
        self.postedAt = postedAt
        self.starred = starred
    }
}
