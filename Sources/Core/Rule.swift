/// One rule of a feed's or the config's `"rules"` list: keep or block the posts it matches.
///
///     {"block": {"text": ["crypto", "nft"]}}
///     {"keep": {"author": "@friend@example.social"}}
///     {"block": {"kind": "repost", "media": false}}
///
/// A rule matches a post when every criterion it gives matches (and a rule with none matches
/// every post); a criterion given as a list matches when any of its values does. Which rule
/// decides is the first that matches, the feed's own rules before the config's (see
/// `docs/rules.md`). The compiled form, which evaluates them, is Sync's `PostRules`.
public struct Rule: Sendable, Hashable {
    /// What a matching rule does to a post.
    public enum Action: String, Sendable, Hashable {
        /// The post is stored (no later rule is asked).
        case keep
        /// The post is not stored; it is counted as filtered.
        case block
    }

    /// How a text (the post's text, or its title) is matched.
    public enum TextMatch: Sendable, Hashable {
        /// Any of the words or phrases, in any case, as whole words.
        case words([String])
        /// A POSIX extended regular expression, in any case.
        case regex(String)
    }

    /// What kind of entry a post is.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// An original post that answers no other.
        case post
        /// A post that answers another.
        case reply
        /// Someone sharing another's post (Mastodon's boost, Bluesky's repost).
        case repost
    }

    public var action: Action
    public var text: TextMatch?
    public var title: TextMatch?
    /// Handles (with or without a leading `@`) or ids of the author, or of who reposted it.
    public var authors: [String]
    /// Hashtags in the text, without `#`, in any case.
    public var tags: [String]
    /// ISO 639 codes; `en` matches `en-GB`. A post without a language matches none.
    public var languages: [String]
    public var visibilities: [Post.Visibility]
    public var kinds: [Kind]
    /// `true`: only posts with media (videos or attachments); `false`: only posts without.
    public var media: Bool?
    /// Where the rule is written (`feeds[2].rules[0]`), for messages.
    public var keyPath: String

    public init(_ action: Action, text: TextMatch? = nil, title: TextMatch? = nil, authors: [String] = [], tags: [String] = [],
                languages: [String] = [], visibilities: [Post.Visibility] = [], kinds: [Kind] = [], media: Bool? = nil,
                keyPath: String = "rules") {
        self.action = action
        self.text = text
        self.title = title
        self.authors = authors
        self.tags = tags
        self.languages = languages
        self.visibilities = visibilities
        self.kinds = kinds
        self.media = media
        self.keyPath = keyPath
    }

    /// Whether the rule gives no criterion, and so matches every post.
    public var matchesEverything: Bool {
        text == nil && title == nil && authors.isEmpty && tags.isEmpty && languages.isEmpty && visibilities.isEmpty
            && kinds.isEmpty && media == nil
    }
}
