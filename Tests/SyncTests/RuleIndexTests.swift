import Core
import Foundation
import ProcessTestSupport
@testable import Sync
import Testing

/// The rule index (``RuleIndex``) and the regular expressions' literals (``RegexLiterals``):
/// asking only the rules the index finds decides every post as asking every rule in turn does.
@Suite struct RuleIndexTests {
    static let vocabulary = [
        "crypto", "Crypto", "CRYPTO", "cryptography", "café", "CAFÉ", "cafe\u{301}", "Zürich", "zürich", "東京", "東京タワー", "🚀",
        "\u{212A}elvin", "kelvin", "KELVIN", "straße", "STRASSE", "İstanbul", "istanbul", "ﬁsh", "fish", "nft", "NFTs", "hot", "take",
        "HOT", "hot_take", "a-b", "a.b", "x1", "x12", "qz1", "QZ12X", "qz3x", "zz0ayy", "ZZ1BYY", "nevermatch1", "#swift", "#Swift",
        "#東京", "a&#nsfw;", "#nsfw", "#NSFW!", "e\u{301}", "\u{301}", "\u{600}x", "—", "'quoted'", "\"double\"", "ǅemal", "1x", "xx",
    ]
    static let separators = [" ", " ", " ", "", ",", "\n", "-", ". ", "\u{301} "]
    static let handles = ["ada", "ADA@example.social", "@bob@example.social", "Cy", "zoë"]

    static func randomPost(_ number: Int, _ random: inout SeededRandom) -> Post {
        func text(_ most: Int) -> String {
            (0..<Int.random(in: 0...most, using: &random)).map { _ in
                vocabulary.randomElement(using: &random)! + separators.randomElement(using: &random)!
            }.joined()
        }
        let handle = handles.randomElement(using: &random)!
        var post = Post(id: PostID("p\(number)"), author: User(id: UserID("id-\(handle.prefix(3))"), handle: handle, displayName: handle),
                        text: text(14), createdAt: Date(timeIntervalSince1970: 0))
        if Bool.random(using: &random) { post.title = text(5) }
        post.language = ["en", "EN-gb", "de", nil, "de_AT", "deu"].randomElement(using: &random)!
        post.visibility = [nil, .public, .unlisted, .direct].randomElement(using: &random)!
        if Int.random(in: 0..<5, using: &random) == 0 { post.replyTo = "p0" }
        if Int.random(in: 0..<6, using: &random) == 0 {
            let by = handles.randomElement(using: &random)!
            post.repost = Post.Repost(by: User(id: UserID("ID-\(by.prefix(2))"), handle: by, displayName: by), originalID: "o")
        }
        if Int.random(in: 0..<4, using: &random) == 0 { post.videoIDs = ["v"] }
        return post
    }

    static let patterns = [
        "qz[0-9]+x|^nevermatch1$", "zz(a|b)yy", "caf", "^hot", "take$", "k+elvin", "crypto(graphy)?", "[0-9]x", "st?r", "a\\.b",
        "\\bcrypto", "é", "(hot|cold) take", "x{2}", "\\-", ".*", "a|", "nfts?", "[[:upper:]]{3}", "qz1|zz", "tak(e|en)$", "\\<nft",
        "fi?sh", "(東京)", "[^a-z]sh", "^$", "xx*1", "ǅ", "kelvin|", "\\.",
    ]

    static func randomRule(_ number: Int, _ random: inout SeededRandom) -> Rule {
        func words() -> Rule.TextMatch {
            .words((0..<Int.random(in: 1...3, using: &random)).map { _ in
                let first = vocabulary.randomElement(using: &random)!
                return Bool.random(using: &random) ? first : first + " " + vocabulary.randomElement(using: &random)!
            })
        }
        func match() -> Rule.TextMatch { Bool.random(using: &random) ? words() : .regex(patterns.randomElement(using: &random)!) }
        var rule = Rule(Bool.random(using: &random) ? .block : .keep, keyPath: "rules[\(number)]")
        // Each criterion in one rule of four or so; a rule may get several, or none.
        if Int.random(in: 0..<3, using: &random) == 0 { rule.text = match() }
        if Int.random(in: 0..<6, using: &random) == 0 { rule.title = match() }
        if Int.random(in: 0..<6, using: &random) == 0 {
            rule.authors = ["ada", "@ADA@example.social", "id-bob", "Bob@Example.Social", "@zoë", "ID-cy"].shuffled(using: &random).prefix(2).map { $0 }
        }
        if Int.random(in: 0..<6, using: &random) == 0 { rule.tags = [["swift"], ["Swift", "nsfw"], ["東京"], ["NSFW"]].randomElement(using: &random)! }
        if Int.random(in: 0..<8, using: &random) == 0 { rule.languages = [["de"], ["EN"], ["deu", "en-GB"]].randomElement(using: &random)! }
        if Int.random(in: 0..<8, using: &random) == 0 { rule.kinds = [[.reply], [.repost], [.post, .reply]].randomElement(using: &random)! }
        if Int.random(in: 0..<8, using: &random) == 0 { rule.visibilities = [.unlisted, .direct] }
        if Int.random(in: 0..<10, using: &random) == 0 { rule.media = Bool.random(using: &random) }
        return rule
    }

    @Test func theIndexDecidesEveryPostAsAskingEachRuleDoesOnSeededRandomPostsAndRules() throws {
        var random = SeededRandom(state: 38)
        var decided = 0
        for round in 0..<60 {
            let rules = try PostRules((0..<Int.random(in: 1...50, using: &random)).map { Self.randomRule($0, &random) })
            for number in 0..<300 {
                let post = Self.randomPost(number, &random)
                let indexed = rules.decidingRule(for: post), each = rules.decidingRuleAskingEach(for: post)
                #expect(indexed == each, "round \(round), post \(String(reflecting: post.text)) title \(String(reflecting: post.title))")
                if each != nil { decided += 1 }
            }
        }
        #expect(decided > 2_000, "the rules decided enough posts to tell the two apart (\(decided) of 18,000)")
    }

    @Test func caseNonASCIIWordsBoundariesRegexAndAuthorsAgreeWithAskingEachRule() throws {
        let cases: [(Rule, String, String, Bool)] = [
            (Rule(.block, text: .words(["CAFÉ"])), "ada", "un café, s'il vous plaît", true),
            (Rule(.block, text: .words(["café"])), "ada", "Un CAFÉ", true),
            (Rule(.block, text: .words(["zürich"])), "ada", "nach ZÜRICH!", true),
            (Rule(.block, text: .words(["東京"])), "ada", "東京タワー", false),
            (Rule(.block, text: .words(["東京"])), "ada", "in 東京 today", true),
            (Rule(.block, text: .words(["kelvin"])), "ada", "\u{212A}elvin", true),
            (Rule(.block, text: .words(["crypto"])), "ada", "cryptography", false),
            (Rule(.block, text: .words(["crypto"])), "ada", "crypto_bros", false),
            (Rule(.block, text: .words(["crypto"])), "ada", "anti-crypto", true),
            (Rule(.block, text: .words(["hot take"])), "ada", "HOT\ntake", true),
            (Rule(.block, text: .words(["hot take"])), "ada", "take hot", false),
            (Rule(.block, text: .regex("qz[0-9]+x|^never$")), "ada", "a QZ12X b", true),
            (Rule(.block, text: .regex("qz[0-9]+x|^never$")), "ada", "NEVER", true),
            (Rule(.block, text: .regex("qz[0-9]+x|^never$")), "ada", "qzx never", false),
            (Rule(.block, text: .regex("(hot|cold) take")), "ada", "a COLD TAKE", true),
            (Rule(.block, authors: ["@Ada@Example.Social"]), "ada@example.social", "x", true),
            (Rule(.block, authors: ["ada"]), "ada@example.social", "x", false),
            (Rule(.block, tags: ["Swift"]), "ada", "#SWIFT rocks", true),
            (Rule(.block, tags: ["swift"]), "ada", "swift", false),
        ]
        for (rule, handle, text, blocks) in cases {
            let rules = try PostRules([rule])
            var post = Post(id: "p", author: User(id: "id-1", handle: handle, displayName: handle), text: text, createdAt: Date(timeIntervalSince1970: 0))
            post.language = "en"
            #expect(rules.blocks(post) == blocks, "\(rule) on \(String(reflecting: text))")
            #expect(rules.decidingRule(for: post) == rules.decidingRuleAskingEach(for: post))
        }
    }

    @Test func foldedTextPiecesHoldEveryASCIITokenAndHashtag() throws {
        func pieces(_ text: String) -> Set<String> {
            var found = Set<String>()
            FoldedText(text).asciiPieces { found.insert($0) }
            return found
        }
        #expect(pieces("Hot TAKE, a_b-c") == ["hot", "take", "a_b", "c"])
        #expect(pieces("\u{212A}elvin") == ["kelvin"], "the Kelvin sign is a k")
        #expect(pieces("東京x1 café") == ["x1", "1", "caf"], "after a non-ASCII byte, the piece without its first byte too")
        var tags = Set<String>()
        FoldedText("#Swift #東京 a#b ##x").hashtagPieces { tags.insert($0) }
        #expect(tags == ["swift", "b", "x"])
        // Whatever splits by character finds, the pieces hold (a prepended character takes in
        // the letter after it: U+0600 then "x").
        for text in ["\u{600}xbc", "ab\u{301}cd", "e\u{301}x", "İstanbul x", "ﬁsh fish"] {
            let tokens = TextMatcher.tokens(text).filter { $0.utf8.allSatisfy(FoldedText.isWordByte) }
            #expect(Set(tokens).isSubset(of: pieces(text)), "\(String(reflecting: text)): \(tokens)")
            for word in ["bc", "xbc", "cd", "x", "istanbul", "stanbul", "fish", "sh"] {
                let rules = try PostRules([Rule(.block, text: .words([word]))])
                let post = Post(id: "p", author: User(id: "u", handle: "u", displayName: "u"), text: text, createdAt: Date(timeIntervalSince1970: 0))
                #expect(rules.decidingRule(for: post) == rules.decidingRuleAskingEach(for: post), "\(word) in \(String(reflecting: text))")
            }
        }
    }

    @Test func aRegularExpressionsLiteralsAreWhatEachAlternativeMustHold() {
        func literals(_ pattern: String) -> [String]? {
            RegexLiterals(pattern)?.literals.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(literals("qz1[0-9]+x|^nevermatch1$") == ["qz1", "nevermatch1"])
        #expect(literals("zz0(a|b)yy") == ["zz0"])
        #expect(literals("AbC") == ["abc"], "lower-cased: the expression ignores case")
        #expect(literals("ab*cd") == ["cd"], "a starred character is not needed")
        #expect(literals("abc?") == ["ab"])
        #expect(literals("ab+c") == ["ab"])
        #expect(literals("a\\.b") == ["a.b"], "an escaped dot is a dot")
        #expect(literals("\\bword") == ["word"])
        #expect(literals("caf[eé]") == ["caf"])
        #expect(literals("x{2}yz") == ["yz"])
        #expect(literals("a|") == nil, "an empty alternative matches anything")
        #expect(literals(".*") == nil)
        #expect(literals("[a-z]+") == nil)
        #expect(literals("(a|b)") == nil)
        #expect(literals("é") == nil, "non-ASCII is left to the expression")
    }

    @Test func aTextAnExpressionMatchesAlwaysHoldsOneOfItsLiterals() throws {
        var random = SeededRandom(state: 7)
        let compiled = try Self.patterns.map { (try PosixRegex($0), RegexLiterals($0)) }
        var matched = 0
        for number in 0..<3_000 {
            let text = Self.randomPost(number, &random).text
            var folded = Array(text.utf8)
            for index in folded.indices where (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(folded[index]) { folded[index] |= 0x20 }
            for (pattern, (regex, literals)) in zip(Self.patterns, compiled) where regex.matches(text) {
                matched += 1
                guard let literals else { continue }
                #expect(folded.withUnsafeBytes { literals.mayMatch($0) }, "\(pattern) matches \(String(reflecting: text))")
            }
        }
        #expect(matched > 3_000)
    }
}
