#if canImport(Glibc)
import Glibc
#endif

/// What a POSIX extended regular expression cannot match without: for each of its top-level
/// alternatives (`a|b`), the longest run of plain ASCII characters it must contain, lower-cased.
/// A text that holds none of them (ASCII case folded) cannot match, so the expression need not
/// run: `qz1[0-9]+x|^never1$` needs `qz1` or `never1`.
///
/// The reading is conservative: anything it is unsure of (a bracket, a group, an escape of a
/// letter, a non-ASCII byte) ends a run, a quantified character (`a*`, `a?`, `a{0,2}`) is not
/// part of one, and an expression with an alternative without a run gets no literals at all
/// (``init(_:)`` is `nil`: it always runs). Literals are only used where the C library matches
/// bytes (`MB_CUR_MAX` 1, the C locale this program keeps), so `REG_ICASE` folds ASCII letters
/// and nothing else.
struct RegexLiterals: Sendable {
    /// The literals, one per alternative, lower-cased ASCII bytes.
    let literals: [[UInt8]]

    /// The literals of `pattern`, or `nil` when an alternative has none (or the C library would
    /// match characters of more than one byte).
    init?(_ pattern: String) {
        guard __ctype_get_mb_cur_max() == 1 else { return nil }
        var literals: [[UInt8]] = []
        for branch in Self.branches(Array(pattern.utf8)) {
            guard let run = Self.longestRun(branch), !run.isEmpty else { return nil }
            literals.append(run)
        }
        guard !literals.isEmpty else { return nil }
        self.literals = literals
    }

    /// Whether some literal occurs in `text`, given with its ASCII letters lower-cased.
    func mayMatch(_ folded: UnsafeRawBufferPointer) -> Bool {
        guard let base = folded.baseAddress else { return false }
        return literals.contains { literal in
            literal.withUnsafeBytes { needle in Self.find(needle, in: base, count: folded.count) }
        }
    }

    /// Whether `needle` (not empty) occurs in the `count` bytes at `base`: each place its first
    /// byte is (`memchr`) compared whole (`memcmp`).
    private static func find(_ needle: UnsafeRawBufferPointer, in base: UnsafeRawPointer, count: Int) -> Bool {
        let first = Int32(needle[0])
        var start = base
        var left = count
        while left >= needle.count, let hit = memchr(start, first, left - needle.count + 1) {
            let found = UnsafeRawPointer(hit)
            if memcmp(found, needle.baseAddress!, needle.count) == 0 { return true }
            left -= found - start + 1
            start = found + 1
        }
        return false
    }

    /// The top-level alternatives: split at `|` outside brackets and groups.
    private static func branches(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var branches: [ArraySlice<UInt8>] = []
        var depth = 0
        var start = 0
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 1
            case UInt8(ascii: "["): index = bracketEnd(bytes, from: index)
            case UInt8(ascii: "("): depth += 1
            case UInt8(ascii: ")"): depth = max(0, depth - 1)
            case UInt8(ascii: "|") where depth == 0:
                branches.append(bytes[start..<index])
                start = index + 1
            default: break
            }
            index += 1
        }
        branches.append(bytes[start..<bytes.count])
        return branches
    }

    /// The index of the `]` that closes the bracket expression opening at `open` (a `]` first,
    /// or after `^`, is a member; `[:alpha:]`-style classes are skipped whole); the last index
    /// when none closes it.
    private static func bracketEnd(_ bytes: [UInt8], from open: Int) -> Int {
        var index = open + 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "^") { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1 }
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "["), index + 1 < bytes.count,
               [UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "=")].contains(bytes[index + 1]) {
                let kind = bytes[index + 1]
                index += 2
                while index + 1 < bytes.count, !(bytes[index] == kind && bytes[index + 1] == UInt8(ascii: "]")) { index += 1 }
                index += 2
                continue
            }
            if bytes[index] == UInt8(ascii: "]") { return index }
            index += 1
        }
        return bytes.count - 1
    }

    /// The longest run of plain characters the branch must contain, lower-cased; `nil` when
    /// the branch is not read with certainty (an unclosed group or interval).
    private static func longestRun(_ branch: ArraySlice<UInt8>) -> [UInt8]? {
        let bytes = Array(branch)
        var best: [UInt8] = []
        var run: [UInt8] = []
        func close() {
            if run.count > best.count { best = run }
            run.removeAll(keepingCapacity: true)
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "{"):
                // The character before is optional: not part of what must be there.
                if !run.isEmpty { run.removeLast() }
                close()
                if byte == UInt8(ascii: "{") {
                    guard let end = bytes[index...].firstIndex(of: UInt8(ascii: "}")) else { return nil }
                    index = end
                }
            case UInt8(ascii: "+"):
                close()
            case UInt8(ascii: "("):
                close()
                guard let end = groupEnd(bytes, from: index) else { return nil }
                index = end
            case UInt8(ascii: "["):
                close()
                index = bracketEnd(bytes, from: index)
            case UInt8(ascii: "\\"):
                // An escaped punctuation character is itself; `\w`, `\<` and the like are not.
                let next = index + 1 < bytes.count ? bytes[index + 1] : 0
                let plain = next < 0x80 && next > 0x20 && !isWordByte(next) && next != UInt8(ascii: "<") && next != UInt8(ascii: ">")
                    && next != UInt8(ascii: "`") && next != UInt8(ascii: "'")
                if plain, index + 2 >= bytes.count || !isQuantifier(bytes[index + 2]) {
                    run.append(next)
                } else {
                    close()
                }
                index += 1
            case UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "$"), UInt8(ascii: ")"), UInt8(ascii: "]"),
                 UInt8(ascii: "}"), 0x80...:
                close()
            default:
                run.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            }
            index += 1
        }
        close()
        return best
    }

    /// The index of the `)` that closes the group opening at `open`, or `nil`.
    private static func groupEnd(_ bytes: [UInt8], from open: Int) -> Int? {
        var depth = 0
        var index = open
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 1
            case UInt8(ascii: "["): index = bracketEnd(bytes, from: index)
            case UInt8(ascii: "("): depth += 1
            case UInt8(ascii: ")"):
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
            index += 1
        }
        return nil
    }

    private static func isQuantifier(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "*") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "+")
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "_")
    }
}
