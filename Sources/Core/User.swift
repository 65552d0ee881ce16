import Foundation

/// A person who writes posts.
public struct User: Hashable, Sendable, Identifiable {
    public var id: UserID
    /// The short name people mention, without a leading `@`.
    public var handle: String
    /// The name shown beside posts; the handle when the backend gives none.
    public var displayName: String
    /// The picture shown beside the name, as its link's text (``WebLink``).
    public var avatar: WebLink?

    public init(id: UserID, handle: String, displayName: String, avatarURL: URL? = nil) {
        self.init(id: id, handle: handle, displayName: displayName, avatar: avatarURL.map(WebLink.init))
    }

    /// As the initializer above, with the avatar's link as text: what a mapping makes from a
    /// backend's answer without a `URL` parse.
    public init(id: UserID, handle: String, displayName: String, avatar: WebLink?) {
        self.id = id
        self.handle = handle
        self.displayName = displayName
        self.avatar = avatar
    }

    /// ``avatar`` as a Foundation `URL`, parsed when read.
    public var avatarURL: URL? {
        get { avatar?.url }
        set { avatar = newValue.map(WebLink.init) }
    }
}
