import Core

/// The rule for a feed's name, one place for every command and the config: a word of letters,
/// digits, `-`, `_` and `.` that does not begin with `-`, so no command line reads it as an
/// option (`feedsync remove NAME`, `feedsync logout NAME`).
///
///     if let problem = FeedName.problem("-x") { throw UsageError("--name \(problem)", usage: usage) }
public enum FeedName {
    /// What is wrong with `name` as the end of a sentence that starts with what named it
    /// (`--name`, `feeds[2].name`), or `nil` when it can name a feed.
    public static func problem(_ name: String) -> String? {
        let shown = "\"\(Terminal.safe(name, limit: 80))\""
        guard !name.isEmpty else { return "is empty" }
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
            return "\(shown) may hold only letters, digits, '-', '_' and '.'"
        }
        guard !name.hasPrefix("-") else {
            return "\(shown) begins with '-', so a command line would read it as an option; begin it with a letter or a digit"
        }
        return nil
    }

    /// Whether `name` can name a feed.
    public static func isValid(_ name: String) -> Bool { problem(name) == nil }
}
