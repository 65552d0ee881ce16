/// Where a feed's sync stopped: the backend's opaque position, plus the validator that lets
/// the backend answer "nothing new" cheaply.
///
/// Core never looks inside either string; the integration that made a cursor is the only
/// one that reads it.
public struct FeedCursor: Hashable, Sendable, CustomStringConvertible {
    /// The backend's position token.
    public var position: String
    /// A cache validator (an HTTP ETag, say) for the request at `position`, if the backend gave one.
    public var validator: String?

    public init(position: String, validator: String? = nil) {
        self.position = position
        self.validator = validator
    }

    public var description: String { position }
}
