import Foundation

/// How feeds are named from what they are: an OPML outline's title, a site's host, a handle.
/// The config names an OPML entry's feeds so, and `feedsync add` and `login` the feeds they add.
public enum FeedNaming {
    /// `"Daring Fireball!"` → `daring-fireball`: lower case, runs of other characters as one
    /// `-`, at most 60 characters; `nil` when nothing readable is left.
    public static func slug(_ text: String?) -> String? {
        guard let text else { return nil }
        var slug = ""
        for character in text.lowercased() {
            if character.isLetter || character.isNumber {
                slug.append(character)
            } else if !slug.isEmpty, slug.last != "-" {
                slug.append("-")
            }
            if slug.count >= 60 { break }
        }
        while slug.last == "-" { slug.removeLast() }
        return slug.isEmpty ? nil : slug
    }

    /// `base`, else `base-2`, `base-3`…: the first not in `names`, which then holds it.
    public static func unique(_ base: String, in names: inout Set<String>) -> String {
        var name = base
        var suffix = 2
        while !names.insert(name).inserted {
            name = "\(base)-\(suffix)"
            suffix += 1
        }
        return name
    }

    /// A feed name from what a person typed (`alice-example.social`): letters, digits, `-`,
    /// `_` and `.` kept, others as `-`, no `-` or `.` at either end, at most 80 characters.
    public static func name(from text: String) -> String {
        var name = String(text.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "-" })
        while name.contains("--") { name = name.replacingOccurrences(of: "--", with: "-") }
        name = name.trimmingCharacters(in: CharacterSet(charactersIn: "-."))
        return name.isEmpty ? "feed" : String(name.prefix(80))
    }
}
