import App
import Core
import Foundation

/// Dispatches `feedsync` to its subcommands and turns every error into one sentence and an exit code.
enum FeedsyncCLI {
    /// The integrations the commands know: the standard ones; a test binds a registry of its
    /// own around ``dispatch(_:output:)`` (`FeedsyncCLI.$registry.withValue(…)`).
    @TaskLocal static var registry = IntegrationRegistry.standard

    static var commands: [any Command.Type] { [
        PullCommand.self, StatusCommand.self, PostsCommand.self, SearchCommand.self, ExportCommand.self, ReadCommand.self,
        UnreadCommand.self, StarCommand.self, UnstarCommand.self, AddCommand.self, RemoveCommand.self, ConfigCheckCommand.self,
        LoginCommand.self, LogoutCommand.self, RulesCommand.self, ServeCommand.self, ServeUserAddCommand.self,
        ServeUserRemoveCommand.self, ServeUserListCommand.self, CompletionCommand.self, ManCommand.self, ServeUserTokenCommand.self,
        ServeUserRevokeCommand.self,
        MediaStatusCommand.self, MediaFetchCommand.self, MediaPruneCommand.self,
    ] }

    static var usage: String {
        let width = commands.map { $0.words.joined(separator: " ").count }.max() ?? 0
        let lines = commands.map { command in
            "  " + command.words.joined(separator: " ").padding(toLength: width + 2, withPad: " ", startingAt: 0) + command.summary
        }
        return """
            usage: feedsync <command> [options]

            Keeps a local SQLite mirror of social feeds. Commands:
            \(lines.joined(separator: "\n"))

            Run `feedsync <command> --help` for a command's options; `feedsync --version` for the version.
            """
    }

    /// Runs the command `arguments` name, then closes standard output and checks that too: an
    /// output that was lost, even at the last flush, ends the process with 74 (EX_IOERR).
    static func run(_ arguments: [String]) async -> ExitStatus {
        let output = CheckedOutput(descriptor: STDOUT_FILENO, name: "standard output")
        let status = await dispatch(arguments, output: output)
        do {
            try output.close()
        } catch {
            // A failure the command already reported (its status is not ok) is not told twice.
            return status == .ok ? fail(error) : status
        }
        return status
    }

    static func dispatch(_ arguments: [String], output: CheckedOutput) async -> ExitStatus {
        do {
            // `-V` and `--version` work anywhere before `--`; `-h` is `--help`. After `--` every
            // argument is the command's, as written (`feedsync remove -- -h` names a feed).
            let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
            if arguments[..<end].contains("--version") || arguments[..<end].contains("-V") {
                try output.line("feedsync \(feedsyncVersion)")
                return .ok
            }
            var arguments = arguments[..<end].map { $0 == "-h" ? "--help" : $0 } + arguments[end...]
            // Options may come before the command: `feedsync --config X status`.
            var leading: [String] = []
            while let first = arguments.first, first.hasPrefix("--"), first != "--help", first != "--" {
                leading.append(arguments.removeFirst())
                if !first.contains("="), let value = arguments.first, !value.hasPrefix("--") { leading.append(arguments.removeFirst()) }
            }
            if arguments.first == "help" {
                arguments.removeFirst()
                guard !arguments.isEmpty else {
                    try output.line(usage)
                    return .ok
                }
                arguments.append("--help")
            }
            if arguments.first == "--help" {
                try output.line(usage)
                return .ok
            }
            guard !arguments.isEmpty else { throw UsageError("no command given", usage: usage) }
            // A group's name alone (`feedsync media`, `feedsync serve-user --help`) lists the group's commands.
            if let group = arguments.first, command(named: group), arguments.count == 1 || arguments[1].hasPrefix("-") {
                let usage = groupUsage(group)
                guard arguments.contains("--help") else { throw UsageError("\"\(group)\" needs one of its commands", usage: usage) }
                try output.line(usage)
                return .ok
            }
            guard let command = commands.first(where: { Array(arguments.prefix($0.words.count)) == $0.words }) else {
                throw UsageError(unknownCommand(arguments), usage: "usage: feedsync <command> [options]")
            }
            let rest = leading + Array(arguments.dropFirst(command.words.count))
            let options = try CommandLineOptions(rest, specs: command.options + [.helpFlag], usage: command.usage)
            if options.has("--help") {
                try output.line(command.help)
                return .ok
            }
            return try await command.run(options, output: output)
        } catch {
            return fail(error)
        }
    }

    /// "unknown command", with the nearest command suggested when one is close.
    static func unknownCommand(_ arguments: [String]) -> String {
        // Each command is compared with as many words as it has: "config chek" with "config check".
        let scored = commands.map { command -> (name: String, distance: Int, given: String) in
            let given = arguments.prefix(command.words.count).joined(separator: " ")
            let name = command.words.joined(separator: " ")
            return (name, editDistance(given, name), given)
        }
        let shown = command(named: arguments.first ?? "") ? arguments.prefix(2).joined(separator: " ") : arguments.first ?? ""
        var message = "unknown command \"\(Terminal.safe(shown, limit: 80))\""
        if let nearest = scored.min(by: { $0.distance < $1.distance }), nearest.distance <= max(2, nearest.given.count / 3) {
            message += "; did you mean \"\(nearest.name)\"?"
        }
        return message
    }

    /// The commands of a group (`media`): its usage line and each command with its summary.
    static func groupUsage(_ group: String) -> String {
        let members = commands.filter { $0.words.count > 1 && $0.words.first == group }
        let width = members.map { $0.words.joined(separator: " ").count }.max() ?? 0
        let lines = members.map { "  " + $0.words.joined(separator: " ").padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.summary }
        let names = members.compactMap { $0.words.dropFirst().first }
        return "usage: feedsync \(group) \(names.joined(separator: "|")) [options]\n\n" + lines.joined(separator: "\n")
    }

    /// Whether `word` starts a command of several words (`config`).
    private static func command(named word: String) -> Bool {
        commands.contains { $0.words.count > 1 && $0.words.first == word }
    }

    /// Levenshtein distance, for suggestions.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Prints an error as one sentence (plus the usage, for a usage error) and picks the exit code.
    ///
    /// A pipe whose reader went away (`feedsync posts | head -1`) exits 74 without a sentence,
    /// as `head` users expect: nobody is left to read what was cut short.
    static func fail(_ error: any Error) -> ExitStatus {
        let status = ExitStatus(for: error)
        if let output = error as? OutputError, output.isBrokenPipe { return status }
        if let usage = error as? UsageError {
            printError("feedsync: \(Terminal.safe(usage.message))\n\(usage.usage)\nRun `feedsync --help` for the commands.")
        } else {
            printError("feedsync: \(describe(error))")
        }
        return status
    }
}

/// Dates as operators read them: ISO 8601 in UTC, proleptic Gregorian (``ISO8601Timestamp``).
func formatted(_ date: Date?) -> String {
    date.map(ISO8601Timestamp.string(from:)) ?? "-"
}

/// Prints what `write` writes as indented JSON on `output`, escaped for a terminal
/// (``JSONWriter/Escaping/terminalControls``): how `posts --json` and `search --json` print
/// records, in the layout of the other commands' ``printJSON(to:_:)``.
func printJSON(to output: CheckedOutput, writing write: (inout JSONWriter) -> Void) throws {
    var json = JSONWriter(escaping: .terminalControls, layout: .indented)
    write(&json)
    try output.line(json.text)
}

/// Encodes a value as pretty, key-sorted JSON on `output`, dates as ``ISO8601Timestamp`` writes them.
///
/// The encoder escapes C0 controls; C1 controls and DEL, which JSON allows raw, are escaped
/// too, so no text from a server reaches the terminal as a control sequence. For the small
/// reports of `status` and `pull`; records go through ``JSONWriter``.
func printJSON(to output: CheckedOutput, _ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(ISO8601Timestamp.string(from: date))
    }
    var json = ""
    for scalar in String(decoding: try encoder.encode(value), as: UTF8.self).unicodeScalars {
        if (0x7F...0x9F).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) {
            json += String(format: "\\u%04x", scalar.value)
        } else {
            json.unicodeScalars.append(scalar)
        }
    }
    // Foundation pretty-prints an empty array over three lines; people and diff tools expect `[]`.
    // A raw line break never occurs inside a JSON string, so this cannot touch data.
    try output.line(json.replacingOccurrences(of: #"\[\n\s*\]"#, with: "[]", options: .regularExpression))
}

/// Loads the config, builds what `load` asks for, runs `body` with the integrations set up,
/// and tears them down after.
func withRuntime<T>(_ options: CommandLineOptions, _ load: Runtime.Options = Runtime.Options(),
                    _ body: (Runtime) async throws -> T) async throws -> T {
    var load = load
    load.registry = FeedsyncCLI.registry
    if load.noticesToTerminal { load.notice = { printError("feedsync: \(Terminal.safe($0, limit: 1_000))") } }
    let runtime = try Runtime.load(configPath: options["--config"], load)
    for warning in runtime.warnings { printError("feedsync: warning: \(Terminal.safe(warning))") }
    try await runtime.start()
    do {
        let result = try await body(runtime)
        await runtime.stop()
        return result
    } catch {
        await runtime.stop()
        throw error
    }
}

/// The options of a command that only reads the local store: no backend is built, so no
/// secret is needed, and a missing store is "nothing synced yet", not a new empty file.
let localOnly = Runtime.Options(feeds: .none, createStore: false)

/// Checks `--feed` against the config's feeds and those the store still holds, failing as
/// `pull --feed` does for a name neither knows.
func checkFeedOption(_ options: CommandLineOptions, _ runtime: Runtime, usage: String) async throws {
    guard let name = options["--feed"], !runtime.feedNames.contains(name) else { return }
    let stored = try await runtime.store.feedStatuses().map(\.feed)
    guard !stored.contains(name) else { return }
    throw UsageError("--feed \(Terminal.safe(name, limit: 80)): the config \(Runtime.noSuchFeed(name, among: runtime.feedNames))", usage: usage)
}
