import App
import Core
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `feedsync login mastodon SERVER` and `feedsync login bluesky HANDLE`: sign in, keep the
/// secret in a 0600 file, and add a feed for the account's home timeline — or, for an account
/// that has a login in the config, replace that login's secret in place.
///
/// Everything that can fail is decided before anything is written (``LoginTarget``), and the
/// files are changed together or not at all (``FileTransaction``).
enum LoginCommand: Command {
    static let words = ["login"]
    static let summary = "Sign in to a Mastodon server or Bluesky and add your home timeline."
    static let synopsis = "login mastodon SERVER | login bluesky HANDLE [--name NAME] [--no-feed] [--token-file PATH] [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [
        .config,
        .init("--name", value: "NAME", "the feed's name (default: the account's handle)"),
        .init("--no-feed", "sign in and keep the secret, but add no feed"),
        .init("--token-file", value: "PATH", "where the token or app password goes (default: beside the store, NAME.token)"),
        .init("--service", value: "URL", "Bluesky: the PDS to sign in to (default https://bsky.social)"),
        .init("--paste", "Mastodon: paste the code shown by the server instead of a loopback callback (the default without a display)"),
        .init("--callback", "Mastodon: take the code through a loopback callback (the default with a display)"),
    ]

    /// How long a sign-in may wait for the person.
    static let patience: TimeInterval = 300

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 2 else {
            throw UsageError("name the network and the account: login mastodon SERVER, or login bluesky HANDLE", usage: usage)
        }
        if let name = options["--name"], let problem = FeedName.problem(name) {
            throw UsageError("--name \(problem)", usage: usage)
        }
        switch options.positionals[0].lowercased() {
        case "mastodon": return try await mastodon(options.positionals[1], options, output)
        case "bluesky": return try await bluesky(options.positionals[1], options, output)
        default:
            throw UsageError("\"\(Terminal.safe(options.positionals[0], limit: 40))\" is not a network feedsync signs in to; use mastodon or bluesky", usage: usage)
        }
    }

    // MARK: Shared

    /// A server as a person types it: `example.social` or `https://example.social`; plain http
    /// only to this machine.
    static func serverURL(_ text: String) throws -> URL {
        let withScheme = text.contains("://") ? text : "https://\(text)"
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.user == nil, url.password == nil else {
            throw UsageError("\"\(Terminal.safe(text, limit: 80))\" is not a server; write example.social or https://example.social", usage: usage)
        }
        if scheme == "http" && !ConfigSection.isLoopback(host) {
            throw UsageError("\"\(Terminal.safe(text, limit: 80))\" is plain http; sign in over https (http is for loopback test servers only)", usage: usage)
        }
        return url
    }

    /// `--token-file` as a path, if given.
    static func givenSecretFile(_ options: CommandLineOptions) -> URL? {
        guard let given = options["--token-file"] else { return nil }
        let expanded = (given as NSString).expandingTildeInPath
        return expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded)
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(expanded)
    }

    /// The feeds `target` names, as a person reads them: `feed "a"` or `feeds "a", "b"`.
    static func feeds(_ names: [String]) -> String {
        (names.count == 1 ? "feed " : "feeds ") + names.map { "\"\(Terminal.safe($0, limit: 80))\"" }.joined(separator: ", ")
    }

    /// A line from standard input, or `nil` at its end or after `seconds`.
    static func readLine(within seconds: TimeInterval) async -> String? {
        await withTaskGroup(of: String?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread { continuation.resume(returning: Swift.readLine(strippingNewline: true)) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// A password from the terminal without echo, or a line of standard input when it is not one.
    static func readPassword(prompt: String) throws -> String {
        var line: String?
        if isatty(STDIN_FILENO) == 1 {
            FileHandle.standardError.write(Data(prompt.utf8))
            var saved = termios()
            tcgetattr(STDIN_FILENO, &saved)
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &silent)
            line = Swift.readLine(strippingNewline: true)
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        } else {
            line = Swift.readLine(strippingNewline: true)
        }
        guard let password = line?.trimmingCharacters(in: .whitespaces), !password.isEmpty else {
            throw UsageError("no app password given (type it at the prompt, or pipe it on standard input)", usage: usage)
        }
        return password
    }

    /// Opens `url` with xdg-open, quietly; the address is printed anyway.
    static func openInBrowser(_ url: URL) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
