import Foundation

/// Bounds and cleans the strings a feed sends, so that one hostile item cannot fill the store.
enum FeedText {
    /// The longest title, name or id kept, in characters.
    static let maxShort = 2_000
    /// The longest content kept, in UTF-8 bytes (a long article fits; a 16 MiB blob does not).
    static let maxContentBytes = 1 << 20

    /// Whitespace-trimmed, control characters removed, cut to `limit` characters; `nil` if empty.
    static func clean(_ text: String?, limit: Int = maxShort) -> String? {
        guard let text else { return nil }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            // Keep tabs and newlines; drop other C0/C1 controls, which no reader wants.
            if scalar.value < 0x20 && scalar != "\n" && scalar != "\t" && scalar != "\r" { continue }
            if (0x7F...0x9F).contains(scalar.value) { continue }
            scalars.append(scalar)
        }
        let trimmed = String(scalars).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        return trimmed.count > limit ? String(trimmed.prefix(limit)) : trimmed
    }

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
        clean(text).map { $0.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ") }
    }

    /// `text` resolved against `base`, kept only when it is an absolute http(s) URL: a feed
    /// may not make the mirror store `javascript:` or `file:` links.
    static func httpURL(_ text: String?, base: URL?) -> URL? {
        guard let text = clean(text, limit: 8_000) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let url = URL(string: trimmed, relativeTo: base)?.absoluteURL ?? URL(string: trimmed.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed.union(.urlQueryAllowed).union(["#", "/", ":", "%"])) ?? "", relativeTo: base)?.absoluteURL,
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else { return nil }
        return url
    }
}
