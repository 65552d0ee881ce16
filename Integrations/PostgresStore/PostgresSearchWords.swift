import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A post's own words (its text, title and content warning) as the `tsvector` that PostgreSQL's
/// `to_tsvector('simple', …)` makes of them, worked out on the page's task instead of the
/// server's insert: the server then parses a ready vector instead of running its text parser,
/// which was the larger part of a cold sync's search cost.
///
/// Only text whose words the server would split the plain way is vouched for: runs of letters
/// and digits (ASCII, Latin-1, Latin Extended-A, basic Cyrillic, kana and the CJK ideographs of
/// Unicode 1.1) between whitespace, punctuation that never joins words, emoji and the general
/// punctuation block. Anything the server's parser may
/// read as more than words (a URL, a host, an e-mail address, a hyphenated word, a signed
/// number, a tag, an entity, a path) or any other character gives `nil`, and the server makes
/// that post's vector itself, as before. The store turns this on only once the server has
/// agreed on ``probe`` (every character vouched for, in every position it is vouched for), so a
/// server whose locale or `simple` configuration differs keeps making every vector itself.
enum PostgresSearchWords {
    /// The `tsvector` literal of `fields` joined by spaces, as `to_tsvector('simple', …)` would
    /// make it; `nil` when the text holds anything the server's parser may read otherwise.
    static func vector(_ fields: String?...) -> String? { vector(of: fields) }

    static func vector(of fields: [String?]) -> String? {
        guard let words = words(of: fields) else { return nil }
        var literal = LiteralText()
        guard words.finish(into: &literal) else { return nil }
        return String(decoding: literal.bytes, as: UTF8.self)
    }

    /// Writes the vector of `fields` joined by spaces to `entries` in the server's order; `false`
    /// (with `entries` partly written) when the text holds anything the server's parser may read
    /// otherwise.
    static func write<Entries: VectorEntries>(_ fields: String?..., to entries: inout Entries) -> Bool {
        guard let words = words(of: fields) else { return false }
        return words.finish(into: &entries)
    }

    private static func words(of fields: [String?]) -> Literal? {
        var literal = Literal()
        for case var field? in fields {
            guard field.utf8.count <= maxTextBytes else { return nil }
            field.makeContiguousUTF8()
            guard field.utf8.withContiguousStorageIfAvailable({ literal.add($0) }) == true else { return nil }
        }
        return literal
    }

    /// The words of a vector's text format, `'café':1,4 'du':2`.
    private struct LiteralText: VectorEntries {
        var bytes: [UInt8] = []

        mutating func entry(_ word: UnsafeBufferPointer<UInt8>, positions: some Collection<Int>) {
            if !bytes.isEmpty { bytes.append(0x20) }
            bytes.append(0x27)
            bytes.append(contentsOf: word)
            bytes.append(contentsOf: [0x27, 0x3A])
            for (index, position) in positions.enumerated() {
                if index > 0 { bytes.append(0x2C) }
                appendDecimal(position, to: &bytes)
            }
        }

        private func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
            if value >= 10 { appendDecimal(value / 10, to: &bytes) }
            bytes.append(UInt8(0x30 + value % 10))
        }
    }

    /// Longer text is left to the server (a vector holds at most 1 MB, positions stop at 16,383).
    static let maxTextBytes = 100_000

    /// The words so far, lowercased, one after another; the literal is written from them sorted
    /// and merged (`'café':1,4 'du':2`), as the server keeps a vector, so its reading of the
    /// literal finds nothing to sort or merge.
    private struct Literal {
        /// The words' UTF-8, one after another.
        private var bytes: [UInt8] = []
        /// Where each word ends in ``bytes``, in order: the word at position `n` ends at `ends[n - 1]`.
        private var ends: [Int] = []
        private var start = 0

        init() {
            bytes.reserveCapacity(256)
            ends.reserveCapacity(32)
        }

        /// Adds the words of one field's UTF-8; `false` when it holds anything not vouched for.
        mutating func add(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
            var index = 0
            var inWord = false, wordBefore = false
            while index < text.count {
                // Most text is ASCII letters: a byte that is one is added as it is, lowercased.
                let byte = text[index]
                if byte < 0x80, case let lower = asciiWordBytes[Int(byte)], lower != 0 {
                    bytes.append(lower)
                    inWord = true
                    wordBefore = true
                    index += 1
                    continue
                }
                let (value, length) = decode(text, at: index)
                if let lower = wordCharacter(value) {
                    inWord = true
                    append(lower)
                    wordBefore = true
                } else {
                    if inWord {
                        guard close() else { return false }
                        inWord = false
                    }
                    let after = index + length < text.count ? decode(text, at: index + length).value : nil
                    let wordAfter = after.map { wordCharacter($0) != nil } ?? false
                    guard separates(value, wordBefore: wordBefore, wordAfter: wordAfter, next: after) else { return false }
                    wordBefore = false
                }
                index += length
            }
            return !inWord || close()
        }

        /// Ends the word begun at `start`; `false` when the server would not index it as written
        /// (a word too long to index, positions past what a vector keeps).
        private mutating func close() -> Bool {
            guard bytes.count - start < 2000, ends.count < 16_000 else { return false }
            // A number in scientific notation (`1e5`) ends where its exponent does: `1e5q` is two words.
            if (0x30...0x39).contains(bytes[start]), bytes[start...].contains(0x65) { return false }
            ends.append(bytes.count)
            start = bytes.count
            return true
        }

        private mutating func append(_ value: UInt32) {
            if value < 0x80 {
                bytes.append(UInt8(value))
            } else if value < 0x800 {
                bytes.append(UInt8(0xC0 | (value >> 6)))
                bytes.append(UInt8(0x80 | (value & 0x3F)))
            } else {   // every word character is below U+10000
                bytes.append(UInt8(0xE0 | (value >> 12)))
                bytes.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
                bytes.append(UInt8(0x80 | (value & 0x3F)))
            }
        }

        /// Writes the words in the server's order (bytewise), each once with its positions in
        /// order; `false` when a word stands at more positions than a vector keeps (255).
        func finish<Entries: VectorEntries>(into entries: inout Entries) -> Bool {
            bytes.withUnsafeBufferPointer { words in
                let base = words.baseAddress
                func span(_ position: Int) -> (start: Int, count: Int) {
                    let start = position == 0 ? 0 : ends[position - 1]
                    return (start, ends[position] - start)
                }
                /// The order of the words at two positions: bytewise, then by position.
                func compare(_ left: Int, _ right: Int) -> Int {
                    let a = span(left), b = span(right)
                    let common = min(a.count, b.count)
                    let bytewise = common == 0 ? 0 : Int(memcmp(base! + a.start, base! + b.start, common))
                    return bytewise != 0 ? bytewise : a.count != b.count ? a.count - b.count : left - right
                }
                var order = Array(ends.indices)
                order.sort { compare($0, $1) < 0 }
                var index = 0
                while index < order.count {
                    let first = span(order[index])
                    var end = index + 1
                    while end < order.count && span(order[end]).count == first.count
                        && (first.count == 0 || memcmp(base! + span(order[end]).start, base! + first.start, first.count) == 0) {
                        end += 1
                    }
                    guard end - index < 250 else { return false }
                    entries.entry(UnsafeBufferPointer(rebasing: words[first.start ..< first.start + first.count]),
                                  positions: order[index ..< end].lazy.map { $0 + 1 })
                    index = end
                }
                return true
            }
        }
    }

    /// The CJK ideographs vouched for: all 20,902 of Unicode 1.1.
    static let cjkIdeographs: ClosedRange<UInt32> = 0x4E00...0x9FA5

    /// Each ASCII byte's lowercase when it is a word character, 0 when it is not.
    private static let asciiWordBytes: [UInt8] = (0 ..< 128).map { UInt8(wordCharacter(UInt32($0)) ?? 0) }

    /// The scalar at `index` of valid UTF-8, and how many bytes it takes.
    private static func decode(_ text: UnsafeBufferPointer<UInt8>, at index: Int) -> (value: UInt32, length: Int) {
        let lead = UInt32(text[index])
        if lead < 0x80 { return (lead, 1) }
        func tail(_ offset: Int) -> UInt32 { index + offset < text.count ? UInt32(text[index + offset] & 0x3F) : 0 }
        if lead < 0xE0 { return ((lead & 0x1F) << 6 | tail(1), 2) }
        if lead < 0xF0 { return ((lead & 0x0F) << 12 | tail(1) << 6 | tail(2), 3) }
        return ((lead & 0x07) << 18 | tail(1) << 12 | tail(2) << 6 | tail(3), 4)
    }

    /// The scalar value lowercased when it is part of a word (a letter or digit the server's
    /// parser and `simple` dictionary treat alike everywhere), `nil` otherwise.
    static func wordCharacter(_ value: UInt32) -> UInt32? {
        switch value {
        case 0x30...0x39, 0x61...0x7A: return value
        case 0x41...0x5A: return value + 0x20
        case 0xAA, 0xB5, 0xBA, 0xDF...0xF6, 0xF8...0xFF: return value
        case 0xC0...0xD6, 0xD8...0xDE: return value + 0x20
        case 0x178: return 0xFF
        case 0x130: return nil   // İ lowercases to two scalars in Unicode's full mapping
        case 0x100...0x137, 0x14A...0x177: return value | 1
        case 0x139...0x148, 0x179...0x17E: return value % 2 == 1 ? value + 1 : value
        case 0x138, 0x149, 0x17F: return value
        // Cyrillic
        case 0x400...0x40F: return value + 0x50
        case 0x410...0x42F: return value + 0x20
        case 0x430...0x45F: return value
        // Hiragana, katakana (not the combining sound marks) and the CJK ideographs of Unicode
        // 1.1 (letters in every C library's tables; later ones may be unknown to an older one):
        // no case.
        case 0x3041...0x3096, 0x309D...0x309F, 0x30A1...0x30FA, 0x30FC...0x30FF, cjkIdeographs: return value
        default: return nil
        }
    }

    /// Whether the scalar `value`, after a word character or not and before one or not (`next`,
    /// when known), only separates words for the server's parser.
    static func separates(_ value: UInt32, wordBefore: Bool, wordAfter: Bool, next: UInt32? = nil) -> Bool {
        switch value {
        case 0x20, 0x09, 0x0A, 0x0D: return true
        // Never part of anything the parser makes: ! " # $ % ' ( ) * , ; = > ? [ \ ] ^ ` { | }
        case 0x21...0x25, 0x27...0x2A, 0x2C, 0x3B, 0x3D, 0x3E, 0x3F, 0x5B...0x5E, 0x60, 0x7B...0x7D: return true
        // Hosts, e-mail addresses, ports and protocols need a dot between words or a slash,
        // which are not vouched for; without them these only separate.
        case 0x3A, 0x40, 0x5F: return true
        // The end of a sentence, not a host, a version, a decimal or a file name (`..`, `x._`).
        case 0x2E: return !wordAfter && next != 0x2E && next != 0x5F
        // Neither a hyphenated word nor a signed number.
        case 0x2B, 0x2D: return !wordBefore && !wordAfter
        // No-break space, Latin-1 punctuation and signs (not the soft hyphen, the superscripts
        // and fractions), × and ÷.
        case 0xA0...0xA9, 0xAB, 0xAC, 0xAE...0xB1, 0xB4, 0xB6...0xB8, 0xBB, 0xBF, 0xD7, 0xF7: return true
        // General punctuation (dashes, quotes, ellipsis), not the zero-width and direction marks.
        case 0x2010...0x2027, 0x2030...0x205E: return true
        // Ideographic space, comma, full stop, ditto mark and brackets.
        case 0x3000...0x3003, 0x3008...0x3011: return true
        // Symbols and emoji that stand alone (no joiner or variation selector, which are not vouched for).
        case 0x2600...0x26FF, 0x2700...0x2775, 0x2794...0x27BF, 0x1F300...0x1F64F, 0x1F680...0x1F6FF, 0x1F900...0x1F9FF:
            return true
        default: return false
        }
    }

    /// Texts that exercise every character ``vector(_:)`` vouches for (of the ideographs, a
    /// sample), each where it may stand, with the vectors they give: the server must make the
    /// same ones from the texts before the store sends its own vectors. In pieces of a few
    /// thousand words, under a vector's limits.
    static let probe: [(text: String, vector: String)] = {
        var pieces: [[String]] = [["Plain ASCII words and digits 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz x1y 9z z9."]]
        var word = 0
        func add(_ part: String) {
            if pieces[pieces.count - 1].count == 2_000 { pieces.append([]) }
            pieces[pieces.count - 1].append(part)
        }
        func next() -> String { word += 1; return "w\(word)" }
        for value in UInt32(0x20)...0x1F9FF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            // One ideograph in 32 and the last: a table that lacked some would lack whole blocks.
            if cjkIdeographs.contains(value), (value - cjkIdeographs.lowerBound) % 32 != 0, value != cjkIdeographs.upperBound { continue }
            let character = Character(scalar)
            if wordCharacter(value) != nil, value > 0x7F {
                add("\(next())\(character) \(character)")
            } else if separates(value, wordBefore: true, wordAfter: true) {
                add("\(next())\(character)\(next())")
            } else if separates(value, wordBefore: false, wordAfter: false) {
                add("\(next()) \(character) \(next())")
            }
            if separates(value, wordBefore: true, wordAfter: false), !separates(value, wordBefore: true, wordAfter: true) {
                add("\(next())\(character) \(next())")
            }
        }
        return pieces.map { parts in
            let text = parts.joined(separator: "\n")
            guard let vector = vector(text) else { preconditionFailure("the probe holds a character the store does not vouch for") }
            return (text, vector)
        }
    }()
}

/// Where ``PostgresSearchWords`` writes a vector: each distinct word once, in the server's order
/// (bytewise), with the positions it stands at (from 1, ascending).
protocol VectorEntries {
    mutating func entry(_ word: UnsafeBufferPointer<UInt8>, positions: some Collection<Int>)
}
