import App
import Core
import Foundation

/// What a form of `feedsync add` reads, for one run: the command line and the config as read.
final class AddSession: AddContext {
    let options: CommandLineOptions
    let usage: String
    let editor: ConfigEditor

    init(_ options: CommandLineOptions, usage: String, editor: ConfigEditor) {
        self.options = options
        self.usage = usage
        self.editor = editor
    }

    func option(_ name: String) -> String? { options[name] }

    func usageError(_ message: String) -> any Error { UsageError(message, usage: usage) }

    func warn(_ sentence: String) { printError("feedsync: warning: \(sentence)") }

    var configName: String { editor.displayName }

    var userAgent: String { "feedsync/\(feedsyncVersion)" }

    func feeds() throws -> [(name: String, posts: [String: ConfigValue])] {
        guard case .object(let root) = try ConfigJSON.parse(Data(editor.text.utf8)), case .array(let feeds)? = root["feeds"] else { return [] }
        return feeds.compactMap { feed in
            guard case .object(let entry) = feed, case .object(let posts)? = entry["posts"], entry["opml"] == nil else { return nil }
            guard case .string(let name)? = entry["name"] else { return ("", posts) }
            return (name, posts)
        }
    }

    func takenNames() throws -> Set<String> { try editor.feedNames() }

    var configContext: ConfigContext {
        ConfigContext(fileName: editor.displayName, directory: editor.url.deletingLastPathComponent(),
                      environment: ProcessInfo.processInfo.environment)
    }
}
