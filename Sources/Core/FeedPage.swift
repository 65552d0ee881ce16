/// One change a backend reports for a feed.
public enum FeedChange: Hashable, Sendable {
    /// The post is new, or its latest version replaces the stored one.
    case upsert(Post)
    /// The post is gone from the feed.
    case delete(PostID)
}

/// An item of a page that could not be read and was dropped, with the reason.
///
/// The server still lists a skipped item, so a walk from the start counts its ``postID`` as
/// seen and keeps the stored copy; a walk that skipped an item with no `postID` deletes nothing
/// (``FullWalk/unidentified``).
public struct SkippedItem: Hashable, Sendable, CustomStringConvertible {
    /// The item's id when it could be read at all, for the person reading the report.
    public var id: String?
    public var reason: String
    /// The id the item's post would be stored under, when the item says it exactly; `nil`
    /// when it carries none that can be trusted (missing, empty, or of an unknown kind).
    public var postID: PostID?

    public init(id: String?, reason: String, postID: PostID? = nil) {
        self.id = id
        self.reason = reason
        self.postID = postID
    }

    public var description: String { "\(id ?? "item without id"): \(reason)" }
}

/// One page of changes from a ``PostService``, oldest first; or a batch of a live stream's
/// changes (``init(streamed:skipped:videos:streamPosition:renames:)``).
///
/// A page is committed whole or not at all, together with ``nextCursor``.
public struct FeedPage: Hashable, Sendable {
    public var changes: [FeedChange]
    /// Items the integration dropped because they could not be read; the rest of the page stands.
    public var skipped: [SkippedItem]
    /// Where the next page starts; after the last page, where the next sync starts. A
    /// ``PostService``'s pages always carry one. `nil` on a streamed batch: the stored cursor
    /// stays as the last poll committed it (a stream knows nothing of where a poll stands, and
    /// the cursor never steps back).
    public var nextCursor: FeedCursor?
    /// Whether more pages follow right now.
    public var hasMore: Bool
    /// On the last page of a walk from the start: whether that walk listed every post the
    /// backend still has, so that a full sync may delete the cached posts it did not see.
    /// `false` for backends whose timelines are bounded or forget (Mastodon's).
    public var missingMeansDeleted: Bool
    /// Videos the page's posts refer to that came with the page itself (a backend may send them
    /// inside its posts); the sync asks the video service only for the others.
    public var videos: [Video]
    /// What the next page will be fetched from, as the backend sees it: by default the
    /// cursor's position. A walk that meets the same one twice is going in circles.
    public var nextRequest: String
    /// What the backend asks of the next poll (web feeds: max-age, a permanent move, 410 Gone).
    public var polling: PollingHint?
    /// Where a live stream had got to when it produced this page (Jetstream's `time_us`), stored
    /// with the page in its transaction, so a restarted daemon resumes the stream there
    /// (``StreamPositionReader``); `nil` leaves the stored one as it is.
    public var streamPosition: String?
    /// New handles a live stream reported for authors without a post to carry them (Bluesky's
    /// `identity` event), applied after the page's changes in its transaction: the feed's stored
    /// author takes the handle, on their row and on every stored post of theirs (search sees it
    /// too), unless a post newer than the rename already carried a profile; an author the feed
    /// has not stored is left alone (``PageWriteResult/renamed`` counts the authors renamed).
    /// So a rename is committed with ``streamPosition`` or not at all, and a stream resumed from
    /// the stored position never skips one.
    public var renames: [AuthorRename]
    /// Posts the page carried that the feed's rules blocked (``Rule``): not stored, counted in
    /// the report, and counted as seen by a walk from the start, so a blocked post is never taken
    /// for one deleted at the source.
    public var filtered: [PostID] = []

    public init(changes: [FeedChange], skipped: [SkippedItem] = [], nextCursor: FeedCursor, hasMore: Bool,
                missingMeansDeleted: Bool = true, videos: [Video] = [], nextRequest: String? = nil, polling: PollingHint? = nil,
                streamPosition: String? = nil, renames: [AuthorRename] = []) {
        self.changes = changes
        self.skipped = skipped
        self.nextCursor = nextCursor
        self.hasMore = hasMore
        self.missingMeansDeleted = missingMeansDeleted
        self.videos = videos
        self.nextRequest = nextRequest ?? nextCursor.position
        self.polling = polling
        self.streamPosition = streamPosition
        self.renames = renames
    }

    /// A batch of a live stream's changes, committed as a page that leaves the feed's cursor as
    /// it is: the last of its pages (``hasMore`` is `false`), and no walk from the start
    /// (``missingMeansDeleted`` is `false`).
    public init(streamed changes: [FeedChange], skipped: [SkippedItem] = [], videos: [Video] = [],
                streamPosition: String? = nil, renames: [AuthorRename] = []) {
        self.changes = changes
        self.skipped = skipped
        self.nextCursor = nil
        self.hasMore = false
        self.missingMeansDeleted = false
        self.videos = videos
        self.nextRequest = ""
        self.polling = nil
        self.streamPosition = streamPosition
        self.renames = renames
    }

    /// The ids of every video the page's posts refer to, each once, in order of first mention.
    public var referencedVideoIDs: [VideoID] {
        var seen = Set<VideoID>()
        var ids: [VideoID] = []
        for case .upsert(let post) in changes {
            for id in post.videoIDs where seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }
}
