import Foundation
import IntegrationKit

/// Bounds and cleans the strings a feed sends, so that one hostile item cannot fill the store.
enum FeedText {
    /// The longest title, name or id kept, in characters.
    static let maxShort = 2_000
    /// The longest content kept, in UTF-8 bytes (a long article fits; a 16 MiB blob does not).
    static let maxContentBytes = 1 << 20

    /// Whitespace-trimmed, control characters removed, cut to `limit` characters; `nil` if empty.
    static func clean(_ text: String?, limit: Int = maxShort) -> String? {
        guard let text else { return nil }
        // Most text has nothing to drop or trim: keep it as it is, without Foundation's trimming
        // (which copies through NSString and was a sixth of a cold sync's CPU).
        let scalars = text.unicodeScalars
        guard scalars.contains(where: isDropped) || scalars.first.map(isTrimmed) == true || scalars.last.map(isTrimmed) == true else {
            guard !text.isEmpty else { return nil }
            return text.utf8.count <= limit || text.count <= limit ? text : String(text.prefix(limit))
        }
        var kept = String.UnicodeScalarView()
        for scalar in scalars where !isDropped(scalar) { kept.append(scalar) }
        let trimmed = trimmed(String(kept))
        guard !trimmed.isEmpty else { return nil }
        return trimmed.count > limit ? String(trimmed.prefix(limit)) : trimmed
    }

    /// `text` without leading and trailing white space: `trimmingCharacters(in: .whitespacesAndNewlines)`
    /// without the trip through NSString.
    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let start = scalars.firstIndex(where: { !isTrimmed($0) }) else { return "" }
        let end = scalars.lastIndex(where: { !isTrimmed($0) })!
        if start == scalars.startIndex && end == scalars.index(before: scalars.endIndex) { return text }
        return String(scalars[start...end])
    }

    /// C0 and C1 controls but tabs and line breaks: no reader wants them.
    private static func isDropped(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\n" && scalar != "\t" && scalar != "\r") || (0x7F...0x9F).contains(scalar.value)
    }

    /// Unicode's White_Space, which trimming drops (the set the HTML renderer trims).
    static func isTrimmed(_ scalar: Unicode.Scalar) -> Bool { HTMLText.isWhiteSpace(scalar) }

    /// Content kept up to ``maxContentBytes`` bytes, cut at a character boundary.
    static func content(_ text: String?) -> String? {
        guard let text = clean(text, limit: Int.max) else { return nil }
        guard text.utf8.count > maxContentBytes else { return text }
        var cut = text.utf8.prefix(maxContentBytes)
        while !cut.isEmpty, String(cut) == nil { cut = cut.dropLast() }
        return String(cut) ?? ""
    }

    /// Runs of whitespace collapsed to one space: how titles and names read.
    static func singleLine(_ text: String?) -> String? {
        guard let text = clean(text) else { return nil }
        // Already one line with single spaces (the common case): nothing to collapse.
        var previousSpace = false
        let collapsed = text.unicodeScalars.allSatisfy { scalar in
            defer { previousSpace = scalar == " " }
            // A mark after a space joins it into one character, which the split below would drop.
            if previousSpace && scalar.value >= 0x300 { return false }
            return scalar == " " ? !previousSpace : !isTrimmed(scalar)
        }
        return collapsed ? text : text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// `text` resolved against `base`, kept only when it is an absolute http(s) URL: a feed
    /// may not make the mirror store `javascript:` or `file:` links.
    static func httpURL(_ text: String?, base: URL?) -> URL? {
        // `clean` has trimmed it already.
        guard let trimmed = clean(text, limit: 8_000) else { return nil }
        guard let url = URL(string: trimmed, relativeTo: base)?.absoluteURL ?? URL(string: trimmed.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed.union(.urlQueryAllowed).union(["#", "/", ":", "%"])) ?? "", relativeTo: base)?.absoluteURL,
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else { return nil }
        return url
    }

    /// Where `needle` (ASCII) first starts in `bytes` at or after `start`: a byte search, where
    /// Foundation's `Data.firstRange(of:)` and `String.contains(_:)` are slow on Linux.
    static func offset(of needle: StaticString, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let count = needle.utf8CodeUnitCount
        guard let base = bytes.baseAddress, count > 0, bytes.count - start >= count else { return nil }
        let first = Int32(needle.utf8Start.pointee)
        var at = start
        while at <= bytes.count - count, let hit = memchr(base + at, first, bytes.count - count + 1 - at) {
            let found = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + found, needle.utf8Start, count) == 0 { return found }
            at = found + 1
        }
        return nil
    }

    /// Whether `text` contains `needle` (ASCII), compared byte by byte.
    static func contains(_ needle: StaticString, in text: String) -> Bool {
        var text = text
        return text.withUTF8 { offset(of: needle, in: UnsafeRawBufferPointer($0), from: 0) != nil }
    }
}
