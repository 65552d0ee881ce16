import App
import Core
import Foundation

/// `feedsync logout NAME`: ends a login's feed through its integration's sign-in flow (which
/// revokes what it can and names its secret files), deletes those files and takes the feed out
/// of the config; the feed's posts stay.
///
/// Everything that can fail is decided first — the feed is a login's, no other feed reads with
/// its secret file, the config edit checks out — then the login is revoked, the config saved,
/// and the files deleted; a failure before the config is saved changes nothing.
enum LogoutCommand: Command {
    static let words = ["logout"]
    static let summary = "Revoke a login's token, delete its files and remove its feed; posts stay."
    static let synopsis = "logout NAME [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 1, let name = options.positionals.first else {
            throw UsageError("name the feed whose login to end", usage: usage)
        }
        let shown = Terminal.safe(name, limit: 80)
        // A feed named before names that begin with '-' were refused can still be logged out of.
        var editor = try ConfigEditor(configPath: options["--config"], optionLikeNames: true, registry: FeedsyncCLI.registry)
        guard editor.existed else { throw UsageError("there is no config yet, so no login to end", usage: usage) }
        let entry = try editor.removeFeed(named: name, usage: usage)
        guard case .object(let fields) = entry, case .object(let posts)? = fields["posts"],
              case .string(let integration)? = posts["integration"] else {
            throw UsageError("feed \(shown) has no posts section", usage: usage)
        }
        guard let flow = editor.registry.integration(named: .string(integration))?.signIn else {
            throw UsageError("feed \(shown) is not a login's feed (it is \(Terminal.safe(integration, limit: 40))); remove it with `feedsync remove \(shown)`", usage: usage)
        }
        let session = LogoutSession(editor, feed: shown, usage: usage)
        let ended = try await flow.signOut(feed: name, posts: posts, session)
        // The config first, then the files: a feed is never left pointing at a deleted file.
        let notes = try session.changes.commit()
        for line in ended.before { try output.line(line) }
        try await ConfigChange.announce(editor, output, saying: "removed feed \(shown) from \(editor.displayName); its posts stay in the store")
        for line in ended.after { try output.line(line) }
        for note in notes { printError("feedsync: warning: \(Terminal.safe(note, limit: 400))") }
        return .ok
    }
}

/// What a sign-in flow ends a login through, for one run of `feedsync logout`: the config
/// without the feed, saved together with the deletion of the login's files.
final class LogoutSession: SignOutContext {
    let editor: ConfigEditor
    /// The feed, as messages show it.
    let feed: String
    let usage: String
    let changes = FileTransaction()

    init(_ editor: ConfigEditor, feed: String, usage: String) {
        self.editor = editor
        self.feed = feed
        self.usage = usage
        changes.save(editor)
    }

    func usageError(_ message: String) -> any Error { UsageError(message, usage: usage) }

    func warn(_ sentence: String) { printError("feedsync: warning: \(sentence)") }

    func resolve(path: String) -> URL {
        let expanded = (path as NSString).expandingTildeInPath
        return expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded) : editor.url.deletingLastPathComponent().appendingPathComponent(expanded)
    }

    /// Refuses to end a login whose secret file other feeds still read with (added by `feedsync
    /// add @user@server` or a handle): deleting or revoking it would break them.
    func refuseShared(_ file: URL) throws {
        let others = LoginTarget.feeds(naming: file, in: editor)
        guard !others.isEmpty else { return }
        let names = others.map { "\"\(Terminal.safe($0, limit: 80))\"" }.joined(separator: ", ")
        throw UsageError("\(others.count == 1 ? "feed" : "feeds") \(names) also read with \(file.path), the login of \(feed); "
                         + "remove \(others.count == 1 ? "it" : "them") first (`feedsync remove NAME`), then log out", usage: usage)
    }

    func readSecretFile(_ url: URL) -> String? { SecretFile.read(url) }

    func prepare() throws { try changes.prepare() }

    func discard() { changes.discard() }

    func remove(_ file: URL) { changes.remove(file) }
}
