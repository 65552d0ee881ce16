/// A typed, opaque identifier: a backend's id string that cannot be mixed up with another kind's.
///
/// Backends name things with strings of their own making (`"p0000042"`, `"109372..."`); Core keeps
/// them as they are and only tags them with what they identify.
///
///     let id: PostID = "p0000042"
public struct Identifier<Tag>: Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The backend's id, unchanged.
    public let rawValue: String

    /// Wraps a backend's id.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Identifies a ``Post`` within its feed.
public typealias PostID = Identifier<Post>
/// Identifies a ``User`` within its feed.
public typealias UserID = Identifier<User>
/// Identifies a ``Video`` on the video host of its feed.
public typealias VideoID = Identifier<Video>
