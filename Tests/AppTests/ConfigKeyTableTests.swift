@testable import App
import Core
import Foundation
import Testing

/// The app's own key tables (``Config/keyTables``, the rows of feedsync.json(5)) against what
/// ``Config`` reads: each key of a table is taken, with a value inside its bounds, in the section
/// the table names; a value just outside them is refused naming that key; and a key the table
/// does not list is refused. So the manual page cannot promise a key, or a bound, the reader
/// does not keep.
@Suite struct ConfigKeyTableTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(#"<opml version="2.0"><body><outline text="A" xmlUrl="https://a.example/feed.xml"/></body></opml>"#.utf8)
            .write(to: folder.appendingPathComponent("subs.opml"))
    }

    static let posts = #""posts": {"integration": "webfeed", "url": "https://example.org/feed.xml"}"#

    /// A config in which the table's section holds `fields` (JSON members, without braces).
    func config(_ table: String, _ fields: [String]) -> String {
        let members = fields.joined(separator: ", ")
        return switch table {
        case "feeds[]": #"{"feeds": [{\#(members), \#(Self.posts)}]}"#
        case "feeds[] (opml)": #"{"feeds": [{\#(members)}]}"#
        default: #"{"feeds": [], "\#(table)": {\#(members)}}"#
        }
    }

    func load(_ text: String) throws -> Config {
        let url = folder.appendingPathComponent("feedsync.json")
        try Data(text.utf8).write(to: url)
        return try Config.load(from: url, displayName: "feedsync.json", environment: [:])
    }

    /// A value of `key`'s kind inside its bounds, and the values just outside them.
    func values(_ key: ConfigKey) -> (inside: String, outside: [String]) {
        switch (key.name, key.kind) {
        case ("name", _): (#""n""#, [])
        case ("listen", _): (#""127.0.0.1:9464""#, [#""127.0.0.1:0""#])
        case ("opml", _): (#""subs.opml""#, [])
        case ("maxBytes", _), ("maxItemBytes", _): (#""20GB""#, [#""0B""#, #""2PB""#, #""20 furlongs""#])
        case ("kinds", _): (#"["image", "avatar"]"#, [#"["pdf"]"#])
        case (_, .int(let range)): ("\(range.upperBound)", ["\(range.lowerBound - 1)", "\(range.upperBound + 1)"])
        case (_, .double(let range)): ("\(range.upperBound)", ["\(range.lowerBound - 0.5)", "\(range.upperBound + 0.5)"])
        case (_, .duration(let range)): (#""\#(Int(range.upperBound))s""#, [#""\#(Int(range.upperBound) + 1)s""#])
        default: (#""x""#, [])
        }
    }

    @Test(arguments: Config.keyTables.map(\.path))
    func everyKeyOfTheTableIsTakenWithinItsBoundsAndRefusedOutsideThem(_ path: String) throws {
        let table = try #require(Config.keyTables.first { $0.path == path })
        let required = table.keys.filter { $0.requirement == .required }.map { #""\#($0.name)": \#(values($0).inside)"# }
        let all = table.keys.map { #""\#($0.name)": \#(values($0).inside)"# }
        #expect(throws: Never.self, "every key of \(path)") { try load(config(path, all)) }
        for key in table.keys {
            for outside in values(key).outside {
                let fields = required.filter { !$0.hasPrefix(#""\#(key.name)""#) } + [#""\#(key.name)": \#(outside)"#]
                do {
                    _ = try load(config(path, fields))
                    Issue.record("\(path).\(key.name) = \(outside) was taken")
                } catch let error as ConfigError {
                    #expect(error.keyPath.hasSuffix(key.name), "\(error)")
                }
            }
        }
        #expect(throws: ConfigError.self, "a key the table does not list") { try load(config(path, required + [#""notAKey": 1"#])) }
    }

    @Test func theManualsDefaultsAreTheReadersDefaults() throws {
        let config = try load(#"{"feeds": [{"name": "n", \#(Self.posts)}]}"#)
        let feed = try #require(config.feeds.first)
        let defaults = Dictionary(uniqueKeysWithValues: Config.keyTables.flatMap { table in
            table.keys.compactMap { key in key.defaultValue.map { ("\(table.path).\(key.name)", $0) } }
        })
        #expect(defaults["feeds[].interval"] == "5m" && feed.interval == 300)
        #expect(defaults["feeds[].maxAttempts"] == "\(feed.maxAttempts)")
        #expect(defaults["feeds[].maxDeletionRatio"] == "\(feed.maxDeletionRatio)")
        #expect(defaults["daemon.concurrency"] == "\(config.daemon.concurrency)")
        #expect(defaults["daemon.maxRequestsPerHost"] == "\(config.daemon.maxRequestsPerHost)")
        #expect(defaults["daemon.maxBackoff"] == "1h" && config.daemon.maxBackoff == 3600)
        #expect(defaults["daemon.heartbeat"] == "30s" && config.daemon.heartbeat == 30)
        #expect(defaults["daemon.lockWait"] == "60s" && config.daemon.lockWait == 60)
    }
}
