import Core
import Foundation

extension Config {
    /// The longest `keep.days`.
    static let maxRetentionDays = 36_500

    /// Reads a `"keep"` object (the config's or a feed's): `{"days": 90, "posts": 10000,
    /// "evenUnread": false}`, each key optional, at least one of `days` and `posts` given.
    ///
    /// - Throws: ``Core/ConfigError`` naming the key path of a value out of range, or an
    ///   object that gives neither limit.
    static func retention(in section: ConfigSection) throws -> Retention? {
        guard let keep = try section.section("keep") else { return nil }
        let retention = Retention(days: try keep.int("days", in: 1...maxRetentionDays), posts: try keep.int("posts", in: 1...100_000_000),
                                  evenUnread: try keep.bool("evenUnread") ?? false)
        try keep.finish()
        guard retention.days != nil || retention.posts != nil else {
            throw keep.error(nil, "needs \"days\" (1 to \(maxRetentionDays)) or \"posts\" (1 to 100000000), or both")
        }
        return retention
    }
}
