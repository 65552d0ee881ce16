@testable import App
import Core
import Foundation
import Testing

/// The feed name rule: a word that no command line can read as an option, checked at `add`,
/// `login` and config load, with old configs' names still readable by `remove` and `logout`.
@Suite struct FeedNameTests {
    @Test(arguments: ["home", "a", "ada-127.0.0.1", "blog.2", "under_score", "9lives", "zürich", "a-", "a--b"])
    func aWordIsAName(_ name: String) {
        #expect(FeedName.problem(name) == nil)
    }

    @Test(arguments: [("-x", "begins with '-'"), ("--purge", "begins with '-'"), ("-", "begins with '-'"), ("-9", "begins with '-'"),
                      ("--", "begins with '-'"), ("", "is empty"), ("a b", "may hold only"), ("a/b", "may hold only"),
                      ("-a b", "may hold only"), ("x\u{1B}[31m", "may hold only"), ("=x", "may hold only")])
    func anythingElseIsRefusedInOneSentence(_ name: String, _ words: String) throws {
        let problem = try #require(FeedName.problem(name))
        #expect(problem.contains(words), "\(problem)")
        #expect(!problem.contains("\u{1B}") && !problem.contains("\n"), "printable: \(problem)")
    }

    func config(_ names: [String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let feeds = names.map { #"{"name": "\#($0)", "posts": {"integration": "webfeed", "url": "https://example.org/\#($0)"}}"# }
        let url = folder.appendingPathComponent("feedsync.json")
        try Data(#"{"feeds": [\#(feeds.joined(separator: ", "))]}"#.utf8).write(to: url)
        return url
    }

    @Test(arguments: [["-x"], ["home", "-x"], ["home", "--help"], ["-"]])
    func aConfigWithANameThatBeginsWithADashIsRefusedNamingItsKeyPath(_ names: [String]) throws {
        let url = try config(names)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let index = names.firstIndex { $0.hasPrefix("-") }!
        do {
            _ = try Runtime.load(configPath: url.path, environment: [:])
            Issue.record("\(names) loaded")
        } catch let error as ConfigError {
            #expect(error.keyPath == "feeds[\(index)].name", "\(error)")
            #expect(error.description.contains("begins with '-'") && error.description.contains("feedsync remove -- \(names[index])"), "\(error)")
            #expect(!error.description.contains("\n"))
        }
        // remove and logout read it, to take it out.
        var options = Runtime.Options()
        options.optionLikeNames = true
        #expect(try Runtime.load(configPath: url.path, environment: [:], options).feedNames == names)
        #expect(try ConfigEditor(configPath: url.path, environment: [:], optionLikeNames: true).feedNames(environment: [:]) == Set(names))
        #expect(throws: ConfigError.self) { try ConfigEditor(configPath: url.path, environment: [:]) }
    }

    @Test func readingOldNamesDoesNotLetAnyOtherFaultIn() throws {
        let url = try config(["-x", "a b"])
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        var options = Runtime.Options()
        options.optionLikeNames = true
        #expect(throws: ConfigError.self) { try Runtime.load(configPath: url.path, environment: [:], options) }
    }
}
