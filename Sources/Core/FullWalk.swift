/// A walk of a whole feed from its start, noting every post the server still lists, so the
/// cached posts it no longer lists can be found afterwards.
///
/// It is a value the syncing side holds, not state in one database connection: any
/// connection, or any store, can sweep with it.
public struct FullWalk: Sendable, Hashable {
    public let feed: String
    /// The posts the committed pages of the walk listed: those they carried, and those they
    /// skipped as unreadable but named, and those the rules blocked (the server still lists them).
    public private(set) var seen: Set<PostID> = []
    /// The first item the walk skipped without an id to count as seen. The walk cannot tell
    /// whether that item is one of the stored posts, so it must not sweep: a stored post the
    /// server still lists would be deleted.
    public private(set) var unidentified: SkippedItem?

    public init(feed: String) { self.feed = feed }

    /// A walk that saw exactly `kept`: sweeping with it deletes every other stored post of the
    /// feed (`feedsync rules apply` removes what the rules block this way).
    public init(feed: String, seeing kept: some Sequence<PostID>) {
        self.feed = feed
        seen = Set(kept)
    }

    /// Whether the walk may delete the stored posts it did not see.
    public var canSweep: Bool { unidentified == nil }

    /// Notes the posts a committed page listed.
    public mutating func note(_ page: FeedPage) {
        for change in page.changes {
            if case .upsert(let post) = change { seen.insert(post.id) }
        }
        seen.formUnion(page.filtered)
        for item in page.skipped {
            if let id = item.postID {
                seen.insert(id)
            } else if unidentified == nil {
                unidentified = item
            }
        }
    }
}
