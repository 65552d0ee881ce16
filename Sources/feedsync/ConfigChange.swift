import App
import Core
import Foundation

/// What `add`, `remove`, `login` and `logout` do after they changed the config: say so, and
/// tell a `feedsyncd` that serves the store to reload.
enum ConfigChange {
    /// Saves `editor` (checked first; nothing is written when the new file does not check out)
    /// and asks the daemons of this machine that serve its store to reload.
    static func commit(_ editor: ConfigEditor, _ options: CommandLineOptions, _ output: CheckedOutput, saying line: String) async throws {
        try editor.save()
        try await announce(editor, output, saying: line)
    }

    /// Says what changed in a config just saved (by ``commit(_:_:_:saying:)`` or a
    /// ``FileTransaction``) and asks the daemons that serve its store to reload.
    static func announce(_ editor: ConfigEditor, _ output: CheckedOutput, saying line: String) async throws {
        try output.line(line)
        if !editor.existed { try output.line("created \(editor.displayName) with a SQLite store beside it") }
        try await reloadDaemons(editor, output)
    }

    /// Asks the `feedsyncd` of this machine that serve the config's store to reload (a secret
    /// file the config names was replaced, or the config changed).
    static func reloadDaemons(_ editor: ConfigEditor, _ output: CheckedOutput) async throws {
        var load = localOnly
        load.notice = { _ in }
        let daemons = (try? await withRuntime(CommandLineOptions.config(editor.url.path), load) { try await $0.store.daemons() }) ?? []
        for pid in DaemonReload.signal(daemons) {
            try output.line("told feedsyncd (pid \(pid)) to reload the config")
        }
    }

    /// Where a new secret file goes by default: beside the store when it is a file, else beside the config.
    static func secretFolder(_ editor: ConfigEditor) -> URL {
        let folder = editor.url.deletingLastPathComponent()
        guard let data = editor.text.data(using: .utf8), case .object(let root)? = try? ConfigJSON.parse(data),
              case .object(let store)? = root["store"] else { return folder }
        if case .string(let integration)? = store["integration"], integration.lowercased() != "sqlite" { return folder }
        if case .string(let path)? = store["path"] {
            let expanded = (path as NSString).expandingTildeInPath
            let url = expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded) : folder.appendingPathComponent(expanded)
            return url.deletingLastPathComponent()
        }
        return folder
    }

    /// `path` as the config should name it: relative when it lies in the config's folder.
    static func configPath(_ url: URL, _ editor: ConfigEditor) -> String {
        let folder = editor.url.deletingLastPathComponent().standardizedFileURL.path
        let path = url.standardizedFileURL.path
        return path.hasPrefix(folder + "/") ? String(path.dropFirst(folder.count + 1)) : path
    }

    /// A feed name from what a person typed: letters, digits, `-`, `_` and `.`, others as `-`.
    static func feedName(from text: String) -> String {
        var name = String(text.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "-" })
        while name.contains("--") { name = name.replacingOccurrences(of: "--", with: "-") }
        name = name.trimmingCharacters(in: CharacterSet(charactersIn: "-."))
        return name.isEmpty ? "feed" : String(name.prefix(80))
    }
}

extension CommandLineOptions {
    /// Options naming only a config, for running a local command on a config just written.
    static func config(_ path: String) -> CommandLineOptions {
        // The parser accepts what it declared; this cannot fail.
        try! CommandLineOptions(["--config", path], specs: [.config], usage: "")
    }
}
