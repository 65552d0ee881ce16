/// A walk of a whole feed from its start, noting every post the server still lists, so the
/// cached posts it no longer lists can be found afterwards.
///
/// It is a value the syncing side holds, not state in one database connection: any
/// connection, or any store, can sweep with it.
public struct FullWalk: Sendable, Hashable {
    public let feed: String
    /// The posts the committed pages of the walk carried.
    public private(set) var seen: Set<PostID> = []

    public init(feed: String) { self.feed = feed }

    /// Notes the posts a committed page carried.
    public mutating func note(_ page: FeedPage) {
        for change in page.changes {
            if case .upsert(let post) = change { seen.insert(post.id) }
        }
    }
}
