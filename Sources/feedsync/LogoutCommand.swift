import App
import Core
import Foundation
import Mastodon

/// `feedsync logout NAME`: revokes a login's token, deletes its secret files and takes its feed
/// out of the config; the feed's posts stay.
///
/// Everything that can fail is decided first — the feed is a login's, no other feed reads with
/// its secret file, the config edit checks out — then the token is revoked, the config saved,
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
        var editor = try ConfigEditor(configPath: options["--config"], optionLikeNames: true)
        guard editor.existed else { throw UsageError("there is no config yet, so no login to end", usage: usage) }
        let entry = try editor.removeFeed(named: name, usage: usage)
        guard case .object(let fields) = entry, case .object(let posts)? = fields["posts"],
              case .string(let integration)? = posts["integration"] else {
            throw UsageError("feed \(shown) has no posts section", usage: usage)
        }
        let folder = editor.url.deletingLastPathComponent()
        func file(_ key: String) -> URL? {
            guard case .string(let path)? = posts[key] else { return nil }
            let expanded = (path as NSString).expandingTildeInPath
            return expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded) : folder.appendingPathComponent(expanded)
        }
        let changes = FileTransaction()
        changes.save(editor)
        var revoked: String?
        var said: [String] = []
        switch integration.lowercased() {
        case "mastodon":
            guard let tokenFile = file("accessTokenFile") else {
                throw UsageError("feed \(shown) takes its token from the environment, not from a login's file; remove it with `feedsync remove \(shown)`", usage: usage)
            }
            try refuseShared(tokenFile, editor, shown)
            // Never through a symlink: what is sent to the server as the token is the login's file.
            guard let token = SecretFile.read(tokenFile), !token.isEmpty else {
                throw ServiceError(.notFound, "reading the token of feed \(shown)", "\(tokenFile.path) is missing, empty or not a regular file, so there is no token to revoke; "
                                   + "take the feed out with `feedsync remove \(shown)` and revoke the token in the server's settings")
            }
            let appFile = MastodonAppFile.url(for: tokenFile)
            if let app = MastodonAppFile.read(appFile) {
                // Revoked once the edit is known to check out, and before it is saved: a token
                // that stays valid on the server is not logged out of.
                try changes.prepare()
                do {
                    try await MastodonLogin(server: app.server).revoke(token: Secret(token), app: app.app)
                } catch {
                    changes.discard()
                    throw error
                }
                revoked = "revoked the token at \(app.server.host ?? app.server.absoluteString)"
            } else {
                printError("feedsync: warning: \(appFile.path) is missing, so the token cannot be revoked here; revoke it in the server's settings (Preferences → Account → Authorized apps)")
            }
            changes.remove(tokenFile)
            changes.remove(appFile)
            said.append("deleted \(tokenFile.path)")
        case "bluesky":
            if let passwordFile = file("appPasswordFile") {
                try refuseShared(passwordFile, editor, shown)
                changes.remove(passwordFile)
                said.append("deleted \(passwordFile.path); revoke the app password itself in Bluesky's settings (Privacy and security → App passwords)")
            }
        default:
            throw UsageError("feed \(shown) is not a login's feed (it is \(Terminal.safe(integration, limit: 40))); remove it with `feedsync remove \(shown)`", usage: usage)
        }
        // The config first, then the files: a feed is never left pointing at a deleted file.
        let notes = try changes.commit()
        if let revoked { try output.line(revoked) }
        try await ConfigChange.announce(editor, output, saying: "removed feed \(shown) from \(editor.displayName); its posts stay in the store")
        for line in said { try output.line(line) }
        for note in notes { printError("feedsync: warning: \(Terminal.safe(note, limit: 400))") }
        return .ok
    }

    /// Refuses to end a login whose secret file other feeds still read with (added by `feedsync
    /// add @user@server` or a handle): deleting or revoking it would break them.
    static func refuseShared(_ file: URL, _ editor: ConfigEditor, _ shown: String) throws {
        let others = LoginTarget.feeds(naming: file, in: editor)
        guard !others.isEmpty else { return }
        let names = others.map { "\"\(Terminal.safe($0, limit: 80))\"" }.joined(separator: ", ")
        throw UsageError("\(others.count == 1 ? "feed" : "feeds") \(names) also read with \(file.path), the login of \(shown); "
                         + "remove \(others.count == 1 ? "it" : "them") first (`feedsync remove NAME`), then log out", usage: usage)
    }
}
