import Foundation

/// A feed a sign-in or an `add` puts in the config: its name, its interval, its `posts` section.
public struct NewFeed: Sendable {
    public var name: String
    /// As the config writes durations (`5m`); `nil` leaves the config's default.
    public var interval: String?
    /// The `posts` section's keys in the order they are written, `integration` first.
    public var posts: [(key: String, value: ConfigValue)]

    public init(name: String, interval: String? = nil, posts: [(key: String, value: ConfigValue)]) {
        self.name = name
        self.interval = interval
        self.posts = posts
    }
}
