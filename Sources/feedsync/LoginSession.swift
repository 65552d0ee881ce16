import App
import Core
import Foundation

/// What a sign-in flow signs in through, for one run of `feedsync login`: the command line,
/// the terminal, and one change of the config and the secret files (``FileTransaction``).
///
/// The config is read when the flow first needs it, so what the person typed is checked first.
final class LoginSession: SignInContext {
    let options: CommandLineOptions
    let output: CheckedOutput
    let usage: String
    let registry: IntegrationRegistry
    /// The config file, found as every command finds it (a new `./feedsync.json` when there is none).
    private let located: (url: URL, name: String)
    private var loaded: ConfigEditor?
    private let changes = FileTransaction()

    init(_ options: CommandLineOptions, output: CheckedOutput, usage: String, registry: IntegrationRegistry) {
        self.options = options
        self.output = output
        self.usage = usage
        self.registry = registry
        located = (try? Runtime.locateConfig(options["--config"], environment: ProcessInfo.processInfo.environment))
            ?? (URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("feedsync.json"), "feedsync.json")
    }

    /// The config as read (and checked) the first time it is needed.
    func editor() throws -> ConfigEditor {
        if let loaded { return loaded }
        let editor = try ConfigEditor(configPath: options["--config"], registry: registry)
        loaded = editor
        return editor
    }

    // MARK: The command line

    func option(_ name: String) -> String? { options[name] }

    func flag(_ name: String) -> Bool { options.has(name) }

    func usageError(_ message: String) -> any Error { UsageError(message, usage: usage) }

    var givenSecretFile: URL? {
        guard let given = options["--token-file"] else { return nil }
        let expanded = (given as NSString).expandingTildeInPath
        return expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded)
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(expanded)
    }

    var userAgent: String { "feedsync/\(feedsyncVersion)" }

    // MARK: The person

    func say(_ line: String) throws { try output.line(line) }

    func ask(_ text: String) throws {
        try output.write(text)
        try output.flush()
    }

    func flush() throws { try output.flush() }

    func warn(_ sentence: String) { printError("feedsync: warning: \(sentence)") }

    func readLine(within seconds: TimeInterval) async -> String? { await TerminalPrompt.readLine(within: seconds) }

    func readSecret(prompt: String) -> String? { TerminalPrompt.readSecret(prompt: prompt) }

    var hasDisplay: Bool { Browser.isAvailable() }

    func openInBrowser(_ url: URL) { Browser.open(url) }

    func listenForCallback(state: String) throws -> any SignInCallback { try LoopbackCallback(state: state) }

    // MARK: The config and the files

    func readConfig() throws { _ = try editor() }

    var configName: String { located.name }

    var configFolder: URL { located.url.deletingLastPathComponent() }

    func server(_ text: String) throws -> URL {
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

    func checkSecretFile(_ url: URL) throws { _ = try SecretFile.check(url) }

    func readSecretFile(_ url: URL) -> String? { SecretFile.read(url) }

    func target(_ request: SignInRequest) throws -> SignInTarget {
        let editor = try editor()
        let target = try LoginTarget.decide(LoginTarget.Request(
            integration: request.integration, secretKey: request.secretKey, account: request.account, name: options["--name"],
            defaultName: request.defaultName, secretFile: givenSecretFile,
            defaultSecretFile: { ConfigChange.secretFolder(editor).appendingPathComponent("\($0).\(request.secretFileSuffix)") },
            addsFeed: !options.has("--no-feed"), isAccount: request.isAccount), in: editor, usage: usage)
        return SignInTarget(name: target.name, secretFile: target.secretFile, refreshed: target.refreshed, addsFeed: target.addsFeed)
    }

    func configPath(_ url: URL) -> String {
        let folder = configFolder.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        return path.hasPrefix(folder + "/") ? String(path.dropFirst(folder.count + 1)) : path
    }

    // MARK: The change

    @discardableResult
    func write(secret: String, to url: URL) throws -> Bool { try changes.write(secret: secret, to: url) }

    func addFeed(_ feed: NewFeed) throws {
        var editor = try editor()
        try editor.addFeed(name: feed.name, fields: feed.editorFields, usage: usage)
        loaded = editor
        changes.save(editor)
    }

    func keepConfig() throws { changes.keep(try editor()) }

    func commit() throws { try changes.commit() }

    func announce(_ line: String) async throws { try await ConfigChange.announce(try editor(), output, saying: line) }

    func reloadDaemons() async throws { try await ConfigChange.reloadDaemons(try editor(), output) }

    func saveSession(_ session: Session, of account: AccountKey) async {
        var load = localOnly
        load.createStore = true
        load.notice = { _ in }
        try? await withRuntime(CommandLineOptions.config(located.url.path), load) { runtime in
            try await runtime.store.saveSession(session, of: account)
        }
    }
}
