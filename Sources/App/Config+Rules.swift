import Core
import Foundation
import Sync

extension Config {
    /// The most rules one list may hold.
    static let maxRules = 500
    /// The most values one criterion may list.
    static let maxRuleValues = 1_000

    /// Reads a `"rules"` list (the config's, a feed's or an `"opml"` entry's): each entry is
    /// `{"keep": {criteria}}` or `{"block": {criteria}}`.
    ///
    /// Criteria: `text` and `title` (a word or phrase, a list of them, or `{"regex": "…"}`),
    /// `author`, `tag`, `language`, `visibility` and `kind` (a string or a list of strings), and
    /// `media` (true or false). An empty object matches every post.
    ///
    /// - Throws: ``Core/ConfigError`` with the key path of what is wrong; a regular expression
    ///   that does not compile is refused when the feed's rules are compiled (``compiledRules(_:_:)``).
    static func rules(in section: ConfigSection) throws -> [Rule] {
        guard let entries = try section.sections("rules") else { return [] }
        guard entries.count <= maxRules else { throw section.error("rules", "holds \(entries.count) rules; at most \(maxRules) are read") }
        return try entries.map { entry in
            let keep = try entry.section("keep"), block = try entry.section("block")
            try entry.finish()
            let (action, criteria): (Rule.Action, ConfigSection)
            switch (keep, block) {
            case (let keep?, nil): (action, criteria) = (.keep, keep)
            case (nil, let block?): (action, criteria) = (.block, block)
            case (nil, nil): throw entry.error(nil, "needs \"keep\" or \"block\", each an object of criteria (text, title, author, tag, language, visibility, kind, media)")
            case (.some, .some): throw entry.error(nil, "give either \"keep\" or \"block\", not both")
            }
            var rule = Rule(action, keyPath: entry.path)
            rule.text = try textMatch(criteria, "text")
            rule.title = try textMatch(criteria, "title")
            rule.authors = try strings(criteria, "author")
            rule.tags = try strings(criteria, "tag").map { $0.hasPrefix("#") ? String($0.dropFirst()) : $0 }
            rule.languages = try strings(criteria, "language")
            rule.visibilities = try strings(criteria, "visibility").map { name in
                guard let visibility = Post.Visibility(rawValue: name.lowercased()) else {
                    throw criteria.error("visibility", "\"\(Terminal.safe(name, limit: 40))\" is not public, unlisted, followers or direct")
                }
                return visibility
            }
            rule.kinds = try strings(criteria, "kind").map { name in
                let lower = name.lowercased()
                guard let kind = lower == "boost" ? .repost : Rule.Kind(rawValue: lower) else {
                    throw criteria.error("kind", "\"\(Terminal.safe(name, limit: 40))\" is not post, reply, boost or repost")
                }
                return kind
            }
            rule.media = try criteria.bool("media")
            try criteria.finish()
            return rule
        }
    }

    /// `feed`'s rules then `global`, compiled, in the order they are asked.
    ///
    /// - Throws: ``Core/ConfigError`` naming the key path of a regular expression that does not compile.
    static func compiledRules(_ feed: [Rule], _ global: [Rule], file: String) throws -> PostRules {
        do {
            return try PostRules(feed + global)
        } catch let error as PostRules.CompileError {
            throw ConfigError(file: file, keyPath: error.keyPath, message: error.reason)
        }
    }

    /// A `text` or `title` criterion.
    private static func textMatch(_ criteria: ConfigSection, _ key: String) throws -> Rule.TextMatch? {
        guard criteria.has(key) else {
            _ = try criteria.string(key)
            return nil
        }
        if let regex = try? criteria.section(key) {
            let pattern = try regex.require(regex.string("regex"), "regex")
            try regex.finish()
            return .regex(pattern)
        }
        let words = try strings(criteria, key)
        guard !words.isEmpty, words.allSatisfy({ !TextMatcherWords.isBlank($0) }) else {
            throw criteria.error(key, "needs a word or phrase, a list of them, or {\"regex\": \"…\"}")
        }
        return .words(words)
    }

    /// A string or a list of strings.
    private static func strings(_ criteria: ConfigSection, _ key: String) throws -> [String] {
        if let list = try criteria.stringList(key) {
            guard list.count <= maxRuleValues else { throw criteria.error(key, "lists \(list.count) values; at most \(maxRuleValues) are read") }
            return list
        }
        guard let single = try criteria.string(key) else { return [] }
        return [single]
    }
}

/// What counts as a word of a rule's `text` or `title`.
enum TextMatcherWords {
    static func isBlank(_ text: String) -> Bool { !text.contains { $0.isLetter || $0.isNumber || $0 == "_" } }
}
