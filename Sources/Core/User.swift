import Foundation

/// A person who writes posts.
public struct User: Hashable, Sendable, Identifiable {
    public var id: UserID
    /// The short name people mention, without a leading `@`.
    public var handle: String
    /// The name shown beside posts; the handle when the backend gives none.
    public var displayName: String
    public var avatarURL: URL?

    public init(id: UserID, handle: String, displayName: String, avatarURL: URL? = nil) {
        self.id = id
        self.handle = handle
        self.displayName = displayName
        self.avatarURL = avatarURL
    }
}
