import Core

/// What the rules ask of one post that takes work to find — its text's and title's words, its
/// hashtags, its author's names, its text in ASCII lower case — each found once, however many
/// rules ask: 20 word rules tokenized a post's text 20 times (perf: 60% of `rules apply`'s
/// time over 1,000,000 posts went to splitting text).
struct PostFacts {
    let post: Post
    private var textWords: [String]?
    private var titleWords: [String]?
    private var tags: Set<String>?
    private var names: [String]?
    private var language: String??
    private var foldedText: FoldedText?
    private var foldedTitle: FoldedText?

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

    /// The post's text, or its title (empty when it has none), as ``FoldedText`` reads it.
    mutating func folded(ofTitle: Bool) -> FoldedText {
        if ofTitle {
            if let foldedTitle { return foldedTitle }
            let folded = FoldedText(post.title ?? "")
            foldedTitle = folded
            return folded
        }
        if let foldedText { return foldedText }
        let folded = FoldedText(post.text)
        foldedText = folded
        return folded
    }

    /// The post's `#tags`, as ``PostRules/Compiled/hashtags(in:)`` finds them.
    mutating func hashtags() -> Set<String> {
        if let tags { return tags }
        // No `#` byte, no `#` character: most posts have no tag, and finding none costs a walk
        // over the text's characters.
        let found = post.text.utf8.contains(UInt8(ascii: "#")) ? PostRules.Compiled.hashtags(in: post.text) : []
        tags = found
        return found
    }

    /// The author's id and handle, and the reposter's, as author rules compare them
    /// (``PostRules/normalizedAuthor(_:)``; ids lower-cased).
    mutating func authorNames() -> [String] {
        if let names { return names }
        var found = [post.author.id.rawValue.lowercased(), PostRules.normalizedAuthor(post.author.handle)]
        if let repost = post.repost { found += [repost.by.id.rawValue.lowercased(), PostRules.normalizedAuthor(repost.by.handle)] }
        names = found
        return found
    }

    /// The post's language, lower-cased.
    mutating func lowercasedLanguage() -> String? {
        if let language { return language }
        let found = post.language?.lowercased()
        language = .some(found)
        return found
    }
}
