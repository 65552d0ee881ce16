import Core

/// What the rules ask of one post that takes work to find — its text's and title's words, its
/// hashtags — each found once, however many rules ask: 20 word rules tokenized a post's text 20
/// times (perf: 60% of `rules apply`'s time over 1,000,000 posts went to splitting text).
struct PostFacts {
    let post: Post
    private var textWords: [String]?
    private var titleWords: [String]?
    private var tags: Set<String>?

    init(_ post: Post) { self.post = post }

    /// The words of the post's text, or of its title (empty when it has none), as
    /// ``TextMatcher/tokens(_:)`` makes them.
    mutating func words(ofTitle: Bool) -> [String] {
        if ofTitle {
            if let titleWords { return titleWords }
            let words = TextMatcher.tokens(post.title ?? "")
            titleWords = words
            return words
        }
        if let textWords { return textWords }
        let words = TextMatcher.tokens(post.text)
        textWords = words
        return words
    }

    /// The post's `#tags`, as ``PostRules/Compiled/hashtags(in:)`` finds them.
    mutating func hashtags() -> Set<String> {
        if let tags { return tags }
        let found = PostRules.Compiled.hashtags(in: post.text)
        tags = found
        return found
    }
}
