import App

/// One `feedsync` subcommand: what it takes and what it does.
protocol Command {
    /// The words that invoke it: `["pull"]`, `["config", "check"]`.
    static var words: [String] { get }
    static var summary: String { get }
    /// The synopsis after `feedsync`: `pull [--config PATH] [--feed NAME] [--full]`.
    static var synopsis: String { get }
    static var options: [CommandLineOptions.Spec] { get }
    /// Runs the command, printing what it prints to `output` (standard output).
    ///
    /// - Throws: an ``OutputError`` when `output` cannot be written, which ends the command (74).
    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus
}

extension Command {
    static var usage: String { "usage: feedsync \(synopsis)" }

    static var help: String {
        "\(usage)\n\n\(summary)\n\noptions:\n\(CommandLineOptions.help(for: options + [.helpFlag]))"
    }
}

extension CommandLineOptions.Spec {
    static let config = Self("--config", value: "PATH", "the config file (default ./feedsync.json, else $FEEDSYNC_CONFIG)")
    static let feed = Self("--feed", value: "NAME", "only this feed of the config")
    static let json = Self("--json", "print JSON for scripts")
    static let since = Self("--since", value: "DATE", "only posts from DATE on (2026-01-31 or 2026-01-31T12:00:00Z)")
    static let helpFlag = Self("--help", "show this help")
}

/// `a, b or c` (`lastJoin` " or "), `a, b, or c` (", or "): items as a sentence lists them.
func listed(_ items: [String], lastJoin: String) -> String {
    guard items.count > 1 else { return items.joined() }
    return items.dropLast().joined(separator: ", ") + lastJoin + items.last!
}
