import Foundation

/// What a piece of archived media is, as the `"media"` section's `"kinds"` names it.
public enum MediaKind: String, Sendable, Hashable, CaseIterable {
    /// An image attachment, or any attachment's preview.
    case image
    /// A video's stream (a progressive file, or an HLS playlist's best variant joined into one).
    case video
    /// An audio attachment or a podcast enclosure.
    case audio
    /// An author's avatar.
    case avatar
}

/// Where a piece of media stands in the archive (`media.status`).
public enum MediaStatus: String, Sendable, Hashable, CaseIterable {
    /// Known, not fetched yet.
    case pending
    /// Stored under its digest.
    case fetched
    /// The last attempt failed in a way a later one may not (a refused connection, a 503);
    /// tried again on a later run until ``MediaItem/maxAttempts``.
    case failed
    /// The server's answer was refused for what it was (a type that lies, more bytes than
    /// announced, a redirect to another scheme, a playlist that loops): not tried again.
    case refused
    /// Not fetched, or removed, to keep the archive under `maxBytes`.
    case skipped
}

/// One address the stored posts point at, and what the archive holds of it: a `media` row.
///
/// The same address is one row whichever posts and feeds refer to it; the same bytes under two
/// addresses are two rows with one digest, and one file.
public struct MediaItem: Hashable, Sendable {
    public var url: URL
    public var kind: MediaKind
    /// The media type the post said (`image/png`), or that its kind implies when it said none.
    public var expectedType: String?
    /// The size the post said, in bytes.
    public var expectedBytes: Int64?
    /// The SHA-256 of the bytes, as 64 lower-case hex digits, once fetched.
    public var digest: String?
    /// How many bytes the file has, once fetched.
    public var bytes: Int64?
    /// The media type the server sent.
    public var mediaType: String?
    public var fetchedAt: Date?
    public var status: MediaStatus
    /// Why the last attempt failed, was refused or skipped: one sentence.
    public var reason: String?
    public var attempts: Int

    /// How many attempts a ``MediaStatus/failed`` item gets in all.
    public static let maxAttempts = 3

    public init(url: URL, kind: MediaKind, expectedType: String? = nil, expectedBytes: Int64? = nil, digest: String? = nil,
                bytes: Int64? = nil, mediaType: String? = nil, fetchedAt: Date? = nil, status: MediaStatus = .pending,
                reason: String? = nil, attempts: Int = 0) {
        self.url = url
        self.kind = kind
        self.expectedType = expectedType
        self.expectedBytes = expectedBytes
        self.digest = digest
        self.bytes = bytes
        self.mediaType = mediaType
        self.fetchedAt = fetchedAt
        self.status = status
        self.reason = reason
        self.attempts = attempts
    }

    /// The file's path inside the archive folder: two levels of fan-out by the digest's first
    /// four hex digits (`ab/cd/abcd…`); `nil` until fetched.
    public var localPath: String? { digest.flatMap(Self.localPath(forDigest:)) }

    /// `ab/cd/abcd…` for a digest of 64 lower-case hex digits; `nil` for anything else, so no
    /// value read back from a store can name a path outside the folder.
    public static func localPath(forDigest digest: String) -> String? {
        guard digest.utf8.count == 64, digest.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        let hex = Array(digest)
        return "\(String(hex[0..<2]))/\(String(hex[2..<4]))/\(digest)"
    }
}

/// A stored post's reference to an address: a `media_refs` row. A reference stays when its
/// post is deleted at the source (keeping what the post pointed at is the archive's point); it
/// goes when the post is removed here (retention) or its feed is purged.
public struct MediaReference: Hashable, Sendable {
    public var feed: String
    public var postID: PostID
    /// When the post was made: the archive removes the oldest first when it needs room.
    public var postedAt: Date
    public var item: MediaItem

    public init(feed: String, postID: PostID, postedAt: Date, item: MediaItem) {
        self.feed = feed
        self.postID = postID
        self.postedAt = postedAt
        self.item = item
    }
}
