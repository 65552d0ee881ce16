import App
import Core

/// `feedsync star ID`: a local star that no sync changes, with the same ID forms as `read`.
enum StarCommand: Command {
    static let words = ["star"]
    static let summary = "Star a post."
    static let synopsis = "star ID [--config PATH] [--feed NAME]"
    static let options: [CommandLineOptions.Spec] = [.config, .feed]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        try await ReadCommand.mark(.star, options, output: output, usage: usage)
    }
}

/// `feedsync unstar ID`: takes a post's star away.
enum UnstarCommand: Command {
    static let words = ["unstar"]
    static let summary = "Take a post's star away."
    static let synopsis = "unstar ID [--config PATH] [--feed NAME]"
    static let options: [CommandLineOptions.Spec] = [.config, .feed]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        try await ReadCommand.mark(.unstar, options, output: output, usage: usage)
    }
}
