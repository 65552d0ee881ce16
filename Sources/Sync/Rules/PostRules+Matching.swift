import Core
import Foundation

extension PostRules.Compiled {
    /// Whether every criterion the rule gives matches `post`.
    func matches(_ post: Post) -> Bool {
        var facts = PostFacts(post)
        return matches(&facts)
    }

    /// Whether every criterion the rule gives matches the post of `facts`, which keeps what it
    /// worked out for the next rule.
    func matches(_ facts: inout PostFacts) -> Bool {
        // Fields are read in place: a copy of the post (or the rule) for each rule asked cost
        // a retain and a release of each of its fields.
        if !self.rule.kinds.isEmpty, !self.rule.kinds.contains(Self.kind(of: facts.post)) { return false }
        if let media = self.rule.media, media != (!facts.post.videoIDs.isEmpty || !facts.post.attachments.isEmpty) { return false }
        if !self.rule.visibilities.isEmpty, !(facts.post.visibility.map(self.rule.visibilities.contains) ?? false) { return false }
        if !languages.isEmpty {
            guard let language = facts.lowercasedLanguage(),
                  languages.contains(where: { language == $0 || language.hasPrefix($0 + "-") || language.hasPrefix($0 + "_") })
            else { return false }
        }
        if !authors.isEmpty, !facts.authorNames().contains(where: authors.contains) { return false }
        if !tags.isEmpty, facts.hashtags().isDisjoint(with: tags) { return false }
        if let text, !text.matches(&facts, title: false) { return false }
        if let title, !title.matches(&facts, title: true) { return false }
        return true
    }

    static func kind(of post: Post) -> Rule.Kind {
        if post.repost != nil { return .repost }
        return post.replyTo == nil ? .post : .reply
    }

    /// The `#tags` of a text, lower-cased, without `#`.
    static func hashtags(in text: String) -> Set<String> {
        var tags = Set<String>()
        var current: String?
        var previous: Character = " "
        for character in text {
            if current != nil {
                if character.isLetter || character.isNumber || character == "_" {
                    current!.append(character)
                    previous = character
                    continue
                }
                if let tag = current, !tag.isEmpty { tags.insert(tag.lowercased()) }
                current = nil
            }
            if character == "#", !(previous.isLetter || previous.isNumber || previous == "_" || previous == "&") { current = "" }
            previous = character
        }
        if let tag = current, !tag.isEmpty { tags.insert(tag.lowercased()) }
        return tags
    }
}

/// A rule's `text` or `title` criterion, ready to match: whole words or phrases in any case, or
/// a compiled POSIX extended regular expression.
struct TextMatcher: Sendable {
    private let words: [[String]]
    private let regex: PosixRegex?
    /// For a regular expression, what a text must hold for it to match, when that is known.
    let literals: RegexLiterals?

    init(_ match: Rule.TextMatch) throws {
        switch match {
        case .words(let list):
            words = list.map { Self.tokens($0) }.filter { !$0.isEmpty }
            regex = nil
            literals = nil
        case .regex(let pattern):
            words = []
            regex = try PosixRegex(pattern)
            literals = RegexLiterals(pattern)
        }
    }

    /// For words, the first word of each phrase: a text matches only when one of them is among
    /// its words. `nil` for a regular expression.
    var firstWords: [String]? { regex == nil ? words.map { $0[0] } : nil }

    func matches(_ text: String) -> Bool {
        if let regex { return regex.matches(text) }
        return matches(words: Self.tokens(text))
    }

    /// Whether the text (or the title) of the post of `facts` matches, its words found once.
    func matches(_ facts: inout PostFacts, title: Bool) -> Bool {
        if let regex { return regex.matches(title ? facts.post.title ?? "" : facts.post.text) }
        return matches(words: facts.words(ofTitle: title))
    }

    private func matches(words tokens: [String]) -> Bool {
        guard !tokens.isEmpty else { return false }
        return words.contains { phrase in
            guard phrase.count <= tokens.count else { return false }
            return (0...(tokens.count - phrase.count)).contains { start in
                phrase.indices.allSatisfy { tokens[start + $0] == phrase[$0] }
            }
        }
    }

    /// The words of a text, lower-cased: runs of letters, digits and `_`.
    static func tokens(_ text: String) -> [String] {
        asciiTokens(text) ?? text.lowercased().split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init)
    }

    /// ``tokens(_:)`` of an all-ASCII text, byte by byte (perf: splitting by `Character` was the
    /// largest part of the rules' cost in a sync); `nil` for any other text.
    private static func asciiTokens(_ text: String) -> [String]? {
        var words: [String] = []
        var word: [UInt8] = []
        func close() {
            if !word.isEmpty { words.append(String(decoding: word, as: UTF8.self)) }
            word.removeAll(keepingCapacity: true)
        }
        for byte in text.utf8 {
            switch byte {
            case 0x80...: return nil
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): word.append(byte | 0x20)
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): word.append(byte)
            default: close()
            }
        }
        close()
        return words
    }
}
