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
        if !editor.existed { try output.line("created \(editor.displayName) with \(editor.registry.defaultStore.summary) beside it") }
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

    /// Where a new secret file goes by default: beside the store when it keeps local files
    /// (``StoreTraits/keepsLocalFiles``), else beside the config.
    static func secretFolder(_ editor: ConfigEditor) -> URL {
        let folder = editor.url.deletingLastPathComponent()
        guard let data = editor.text.data(using: .utf8), case .object(let root)? = try? ConfigJSON.parse(data) else { return folder }
        var fields: [String: ConfigValue] = [:]
        if case .object(let store)? = root["store"] { fields = store }
        let integration = fields["integration"] == nil ? editor.registry.defaultStore : editor.registry.integration(named: fields["integration"])
        guard let integration, let capability = integration.store, capability.traits.keepsLocalFiles else { return folder }
        // Built, not set up: nothing is opened; the store says where its file is.
        let context = ConfigContext(fileName: editor.displayName, directory: folder, environment: [:])
        context.deferMissingSecrets = true
        guard let built = try? capability.makeStore(ConfigSection(fields, path: "store", context: context), false, .disabled),
              let database = (built.lifecycle as? any LocalStoreFiles)?.databaseFile else { return folder }
        return URL(fileURLWithPath: database).deletingLastPathComponent()
    }
}

extension CommandLineOptions {
    /// Options naming only a config, for running a local command on a config just written.
    static func config(_ path: String) -> CommandLineOptions {
        // The parser accepts what it declared; this cannot fail.
        try! CommandLineOptions(["--config", path], specs: [.config], usage: "")
    }
}
