import Core
import Foundation

extension Config {
    /// A feed of the config before every name is handed out: the feed of a site-only outline
    /// is named after all others, so that it never takes the name of a feed with a `url` or an
    /// `xmlUrl`, wherever either stands.
    enum PendingFeed {
        case named(Feed)
        /// A site-only outline's feed: the name it would like, and the feed made with the name it gets.
        case site(base: String, make: (String) -> Feed)
    }

    /// Expands a `feeds[]` entry that names an OPML file into one feed per subscription, of the
    /// integration that reads such lists (``IntegrationRegistry/subscriptionList``: web feeds).
    ///
    ///     {"name": "blogs", "opml": "subscriptions.opml", "interval": "30m",
    ///      "posts": {"timeoutSeconds": 20}}
    ///
    /// The entry's settings (`interval`, `maxDeletionRatio`, `maxAttempts`, `rules`, `keep`, and the `posts`
    /// section, whose `integration` defaults to that integration) are every feed's defaults;
    /// what the integration makes of each subscription is added (for a web feed, the `xmlUrl`
    /// as `posts.url`; an outline with only an `htmlUrl` gives that page, whose feed the pull
    /// discovers). A feed is named for its outline's title in
    /// lower case with runs of other characters as `-`, after `name.` when the entry has a name
    /// (`blogs.daring-fireball`); a name taken already gets `-2`, `-3`… in file order. Renaming
    /// an outline renames its feed; moving it in the file does not. The feeds of site-only
    /// outlines are named last (``PendingFeed``): one added to the file never renames a feed
    /// with an `xmlUrl`, which would point its name, cursor and read marks at another URL.
    /// The file is read with the config, so SIGHUP re-reads it.
    static func expandOPML(_ section: ConfigSection, intervals: ClosedRange<TimeInterval>, names: inout Set<String>,
                           registry: IntegrationRegistry) throws -> [PendingFeed] {
        let file = try section.require(section.path("opml"), "opml")
        guard let (reader, list) = registry.subscriptionList else { throw section.error("opml", "no integration here reads subscription lists") }
        let prefix = try section.nonEmptyString("name")
        if let prefix, !prefix.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) {
            throw section.error("name", "\"\(prefix)\" may hold only letters, digits, '-', '_' and '.'")
        }
        let interval = try section.duration("interval", in: intervals) ?? 300
        let maxDeletionRatio = try section.double("maxDeletionRatio", in: 0...1) ?? 0.5
        let maxAttempts = try section.int("maxAttempts", in: 1...20) ?? 6
        let defaults = try section.section("posts") ?? ConfigSection([:], path: section.keyPath("posts"), context: section.context)
        let videos = try section.section("videos")
        let rules = try rules(in: section)
        let retention = try retention(in: section)
        try section.finish()
        let shown = try section.string("opml") ?? file.path
        guard let data = FileManager.default.contents(atPath: file.path) else {
            let exists = FileManager.default.fileExists(atPath: file.path)
            throw section.error("opml", "\"\(Terminal.safe(shown, limit: 200))\": \(exists ? (DescriptorLimit.reasonIfExhausted() ?? "cannot be read") : "no such file")")
        }
        let subscriptions: [Subscription]
        do {
            subscriptions = try list.read(data)
        } catch let error as SubscriptionListError {
            throw section.error("opml", "\"\(Terminal.safe(shown, limit: 200))\": \(error.description)")
        }
        var integration: [String: ConfigValue] = [:]
        if !defaults.has("integration") { integration["integration"] = .string(reader.name) }
        return subscriptions.map { subscription in
            let slug = FeedNaming.slug(subscription.title) ?? FeedNaming.slug(subscription.url.host) ?? "feed"
            let base = prefix.map { "\($0).\(slug)" } ?? slug
            let make = { (name: String) -> Feed in
                let posts = defaults.merging(integration.merging(list.fields(subscription)) { _, new in new },
                                             path: "\(section.path) (\(shown): \(name)).posts")
                return Feed(name: name, interval: interval, posts: posts, videos: videos, maxDeletionRatio: maxDeletionRatio,
                            maxAttempts: maxAttempts,
                            origin: "\(shown): \"\(subscription.title ?? "")\" \(subscription.url.absoluteString)"
                                + (subscription.isSite ? " (a site: its feed is discovered on the page)" : ""), rules: rules,
                            retention: retention)
            }
            return subscription.isSite ? .site(base: base, make: make) : .named(make(FeedNaming.unique(base, in: &names)))
        }
    }
}
