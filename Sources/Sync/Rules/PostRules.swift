import Core
import Foundation

/// A feed's rules, compiled: the feed's own, then the config's, asked in that order; the first
/// that matches a post decides whether it is kept or blocked, and a post no rule matches is kept.
///
///     let rules = try PostRules(feedRules + globalRules)
///     let page = rules.filter(fetchedPage)      // blocked posts out, their ids in page.filtered
///
/// Rules are evaluated in memory on each post of a page, before the page is prepared for the
/// store, so a blocked post is never written.
public struct PostRules: Sendable {
    /// A rule with its text criteria compiled.
    struct Compiled: Sendable {
        let rule: Rule
        let text: TextMatcher?
        let title: TextMatcher?
        let authors: Set<String>
        let tags: Set<String>
        let languages: [String]
    }

    /// Why a rule cannot be used: its key path and the reason.
    public struct CompileError: Error, CustomStringConvertible, Sendable {
        public let keyPath: String
        public let reason: String
        public var description: String { "\(keyPath): \(reason)" }
    }

    let compiled: [Compiled]
    /// Which rules can match a post, so that only those are asked.
    private let index: RuleIndex

    /// No rule: every post is kept.
    public init() {
        compiled = []
        index = RuleIndex([])
    }

    /// Compiles `rules`, in the order they are asked.
    ///
    /// - Throws: ``CompileError`` naming the first rule whose text or title does not compile
    ///   (with the criterion's key path: `feeds[0].rules[2].block.text`).
    public init(_ rules: [Rule]) throws {
        compiled = try rules.map { rule in
            func matcher(_ match: Rule.TextMatch?, _ key: String) throws -> TextMatcher? {
                guard let match else { return nil }
                do {
                    return try TextMatcher(match)
                } catch let error as PosixRegex.CompileError {
                    throw CompileError(keyPath: "\(rule.keyPath).\(rule.action.rawValue).\(key)", reason: error.description)
                }
            }
            return Compiled(rule: rule, text: try matcher(rule.text, "text"), title: try matcher(rule.title, "title"),
                            authors: Set(rule.authors.map(Self.normalizedAuthor)), tags: Set(rule.tags.map { $0.lowercased() }),
                            languages: rule.languages.map { $0.lowercased() })
        }
        index = RuleIndex(compiled)
    }

    /// Whether there is no rule at all.
    public var isEmpty: Bool { compiled.isEmpty }

    /// The rule that blocks every post, when the rules do: the first rule that matches
    /// everything is a block, and no keep rule comes before it. For `config check`'s warning.
    public var blockingEverything: Rule? {
        for entry in compiled {
            if entry.rule.action == .keep { return nil }
            if entry.rule.matchesEverything { return entry.rule }
        }
        return nil
    }

    /// The rule that decides `post`, or `nil` when none matches (the post is kept).
    public func decidingRule(for post: Post) -> Rule? {
        guard !compiled.isEmpty else { return nil }
        var facts = PostFacts(post)
        for number in index.candidates(&facts) where compiled[number].matches(&facts) { return compiled[number].rule }
        return nil
    }

    /// ``decidingRule(for:)`` found by asking every rule in turn, without the index: what the
    /// index must always agree with (its tests compare the two).
    func decidingRuleAskingEach(for post: Post) -> Rule? {
        var facts = PostFacts(post)
        return compiled.first { $0.matches(&facts) }?.rule
    }

    /// Whether the rules block `post`.
    public func blocks(_ post: Post) -> Bool { decidingRule(for: post)?.action == .block }

    /// `page` without the posts the rules block, whose ids go to ``Core/FeedPage/filtered``.
    /// Deletions stay: a post deleted at the source goes whatever the rules say.
    public func filter(_ page: FeedPage) -> FeedPage {
        guard !compiled.isEmpty else { return page }
        var page = page
        var kept: [FeedChange] = []
        kept.reserveCapacity(page.changes.count)
        for change in page.changes {
            if case .upsert(let post) = change, blocks(post) {
                page.filtered.append(post.id)
            } else {
                kept.append(change)
            }
        }
        page.changes = kept
        return page
    }

    /// A handle without its leading `@`, or an id, in lower case.
    static func normalizedAuthor(_ text: String) -> String {
        (text.hasPrefix("@") ? String(text.dropFirst()) : text).lowercased()
    }
}
