import App
import Core
import Foundation
import Mastodon

/// `feedsync logout NAME`: revokes a login's token, deletes its secret files and takes its feed
/// out of the config; the feed's posts stay in the store.
enum LogoutCommand: Command {
    static let words = ["logout"]
    static let summary = "Revoke a login's token, delete its files and remove its feed; posts stay."
    static let synopsis = "logout NAME [--config PATH]"
    static let options: [CommandLineOptions.Spec] = [.config]

    static func run(_ options: CommandLineOptions, output: CheckedOutput) async throws -> ExitStatus {
        guard options.positionals.count == 1, let name = options.positionals.first else {
            throw UsageError("name the feed whose login to end", usage: usage)
        }
        var editor = try ConfigEditor(configPath: options["--config"])
        guard editor.existed else { throw UsageError("there is no config yet, so no login to end", usage: usage) }
        let entry = try editor.removeFeed(named: name, usage: usage)
        guard case .object(let fields) = entry, case .object(let posts)? = fields["posts"],
              case .string(let integration)? = posts["integration"] else {
            throw UsageError("feed \(name) has no posts section", usage: usage)
        }
        let folder = editor.url.deletingLastPathComponent()
        var doomed: [URL] = []
        var said: [String] = []
        func file(_ key: String) -> URL? {
            guard case .string(let path)? = posts[key] else { return nil }
            let expanded = (path as NSString).expandingTildeInPath
            return expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded) : folder.appendingPathComponent(expanded)
        }
        switch integration.lowercased() {
        case "mastodon":
            guard let tokenFile = file("accessTokenFile") else {
                throw UsageError("feed \(name) takes its token from the environment, not from a login's file; remove it with `feedsync remove \(name)`", usage: usage)
            }
            let token = try String(contentsOf: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let appFile = LoginCommand.appFile(tokenFile)
            if let data = FileManager.default.contents(atPath: appFile.path), case .object(let app) = try ConfigJSON.parse(data),
               case .string(let server)? = app["server"], case .string(let id)? = app["client_id"],
               case .string(let secret)? = app["client_secret"], let url = URL(string: server) {
                // Revoked first: a token that stays valid on the server is not logged out.
                try await MastodonLogin(server: url).revoke(token: Secret(token), app: .init(clientID: id, clientSecret: secret))
                try output.line("revoked the token at \(url.host ?? server)")
            } else {
                printError("feedsync: warning: \(appFile.path) is missing, so the token cannot be revoked here; revoke it in the server's settings (Preferences → Account → Authorized apps)")
            }
            doomed += [tokenFile, appFile]
            said.append("deleted \(tokenFile.path)")
        case "bluesky":
            if let passwordFile = file("appPasswordFile") {
                doomed.append(passwordFile)
                said.append("deleted \(passwordFile.path); revoke the app password itself in Bluesky's settings (Privacy and security → App passwords)")
            }
        default:
            throw UsageError("feed \(name) is not a login's feed (it is \(integration)); remove it with `feedsync remove \(name)`", usage: usage)
        }
        // The config first: a feed is never left pointing at a deleted file.
        try await ConfigChange.commit(editor, options, output, saying: "removed feed \(name) from \(editor.displayName); its posts stay in the store")
        doomed.forEach(SecretFile.remove)
        for line in said { try output.line(line) }
        return .ok
    }
}
