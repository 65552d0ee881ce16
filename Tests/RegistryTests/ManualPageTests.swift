import App
import Core
import ExampleIntegration
@testable import feedsync
import Foundation
import ProcessTestSupport
import Testing

/// The three manual pages `feedsync man` writes: `mandoc -T lint` finds nothing to say of them,
/// and each names every command, option and config key it is written from, so a command or a
/// key added to the code is in the page without anyone writing it there.
@Suite struct ManualPageTests {
    static var pages: [(file: String, text: String)] {
        [("man1/feedsync.1", ManCommand.commandsPage), ("man8/feedsyncd.8", DaemonManual.page),
         ("man5/feedsync.json.5", ConfigManual.page)]
    }

    @Test func mandocLintFindsNothingInAnyPage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-man-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for page in Self.pages {
            let file = folder.appendingPathComponent(page.file)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try page.text.write(to: file, atomically: true, encoding: .utf8)
        }
        // The pages refer to each other (`.Xr`): mandoc finds them through the folder's index.
        #expect(try run("makewhatis", [folder.path]).status == 0)
        let lint = try run("mandoc", ["-T", "lint", "-W", "style", "-M", folder.path] + Self.pages.map { folder.appendingPathComponent($0.file).path })
        #expect(lint.output.isEmpty, "\(lint.output)")
        #expect(lint.status == 0)
    }

    @Test func feedsyncOneNamesEveryCommandAndEachOfItsOptions() {
        let page = ManCommand.commandsPage
        for command in FeedsyncCLI.commands {
            // As mdoc writes it: a hyphen in a name (`serve-user`) is `\-`.
            #expect(page.contains("\n.Ss \(ManualPage.escape("feedsync " + command.words.joined(separator: " ")))\n"), "\(command.words)")
            for option in command.options + [.helpFlag] {
                #expect(page.contains(".It \(ManualPage.head(option))\n"), "\(command.words) \(option.name)")
            }
        }
        for status in ExitStatus.allCases {
            #expect(page.contains("\n.It \(status.rawValue)\n"), "exit \(status.rawValue)")
        }
    }

    @Test func feedsyncdEightNamesEveryOptionAndSignal() {
        let page = DaemonManual.page
        for option in DaemonCommandLine.options {
            #expect(page.contains(".It \(ManualPage.head(option))\n"), "\(option.name)")
        }
        for signal in DaemonCommandLine.signals {
            #expect(page.contains(".It Dv \(signal.name)\n"), "\(signal.name)")
        }
    }

    @Test func feedsyncJSONFiveNamesEveryKeyOfEveryTableAndIntegration() {
        let sections = Self.subsections(ConfigManual.page)
        for table in Config.keyTables {
            let section = sections[ManualPage.escape(table.path)]
            #expect(section != nil, "\(table.path)")
            for key in table.keys {
                #expect(section?.contains(".It Cm \(ManualPage.escape(key.name))\n") == true, "\(table.path).\(key.name)")
            }
        }
        for descriptor in IntegrationRegistry.standard.descriptors {
            let section = sections.first { $0.key.hasPrefix("\(descriptor.name): ") }?.value
            #expect(section != nil, "\(descriptor.name)")
            for key in descriptor.keys {
                #expect(section?.contains(".It Cm \(ManualPage.escape(key.name))\n") == true, "\(descriptor.name).\(key.name)")
            }
        }
    }

    /// Each `.Ss` of a page by its title (without a closing `\&`), with the lines up to the next `.Ss` or `.Sh`.
    static func subsections(_ page: String) -> [String: String] {
        var sections: [String: String] = [:]
        var title: String?
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".Ss ") {
                var name = String(line.dropFirst(4))
                if name.hasSuffix("\\&") { name.removeLast(2) }
                title = name
                sections[name] = ""
            } else if line.hasPrefix(".Sh ") {
                title = nil
            } else if let title {
                sections[title, default: ""] += line + "\n"
            }
        }
        return sections
    }

    /// The EXAMPLES of feedsync.json(5) is a config the reader takes.
    @Test func theExampleOfTheConfigPageLoads() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-man-example-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try ConfigManual.example.write(to: file, atomically: true, encoding: .utf8)
        let config = try Config.load(from: file, displayName: "example", environment: [:])
        #expect(config.feeds.count == 2)
        #expect(ConfigManual.page.contains(ConfigManual.example.split(separator: "\n").map { ManualPage.escape(String($0)) }.joined(separator: "\n")))
    }

    /// The page follows the registry it is written from: an integration registered by one line
    /// is in feedsync.json(5) with its keys, and its sign-in in feedsync(1)'s login synopsis.
    @Test func aRegisteredIntegrationIsInThePagesWithItsKeys() {
        let registry = IntegrationRegistry(IntegrationRegistry.standard.descriptors + [ExampleIntegration.descriptor])
        let (config, commands) = FeedsyncCLI.$registry.withValue(registry) { (ConfigManual.page, ManCommand.commandsPage) }
        #expect(config.contains("\n.Ss example: made\\-up posts for the tests\n"))
        for key in ExampleIntegration.descriptor.keys {
            #expect(config.contains(".It Cm \(key.name)\n"), "\(key.name)")
        }
        #expect(commands.contains(".Cm example"), "login example")
        #expect(!ConfigManual.page.contains(".Ss example:"), "the standard registry has no example")
    }

    @Test func anUnknownPageIsAUsageError() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-man-\(UUID().uuidString)")
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        defer { try? FileManager.default.removeItem(at: file) }
        let output = CheckedOutput(descriptor: descriptor, name: "the test's output")
        #expect(await FeedsyncCLI.dispatch(["man", "feedsync.conf"], output: output) == .usage)
        #expect(await FeedsyncCLI.dispatch(["man", "feedsyncd"], output: output) == .ok)
        try output.close()
        #expect(try String(contentsOf: file, encoding: .utf8) == DaemonManual.page)
    }

    /// Runs a tool of the system, with its standard output and error together.
    func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let pipe = makePipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try launch(process)
        try? pipe.fileHandleForWriting.close()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        closeEnds(pipe)
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
