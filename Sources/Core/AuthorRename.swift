import Foundation

/// An author's new handle, as a live stream reported it at `at` (Bluesky's `identity` event),
/// carried by a ``FeedPage`` to the store.
public struct AuthorRename: Hashable, Sendable {
    public var author: UserID
    public var handle: String
    public var at: Date

    public init(author: UserID, handle: String, at: Date) {
        self.author = author
        self.handle = handle
        self.at = at
    }
}
