import Foundation
import Testing

/// A feed name cannot be mistaken for an option: one that begins with `-` is refused by `add`,
/// `login` and every config load, yet an old config's can still be removed; `--` ends options
/// in every command.
@Suite(.endToEnd) struct FeedNameEndToEndTests {
    /// A config with a web feed `blog` and the feeds `names`, as an older feedsync let them be written.
    func writeConfig(_ scratch: Scratch, _ names: [String]) throws -> String {
        let feeds = (["blog"] + names).map { #"{"name": "\#($0)", "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/\#($0)"}}"# }
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(#"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [\#(feeds.joined(separator: ",\n  "))]}"#.utf8).write(to: url)
        return url.path
    }

    @Test(arguments: [["add", "http://127.0.0.1:9/feed", "--name", "-x"], ["add", "--name=-x", "http://127.0.0.1:9/feed"],
                      ["add", "--name", "--purge", "http://127.0.0.1:9/feed"], ["add", "http://127.0.0.1:9/feed", "--name", "-"],
                      ["login", "mastodon", "127.0.0.1:9", "--name", "-x"], ["login", "bluesky", "me.test", "--name=-x"]])
    func aNameThatBeginsWithADashIsRefusedBeforeAnythingHappens(_ arguments: [String]) async throws {
        let scratch = try Scratch()
        let config = try writeConfig(scratch, [])
        let before = snapshot(scratch.folder)
        let result = try await feedsync(arguments + ["--config", config])
        let expected = arguments.contains("--purge") ? "needs a value" : "begins with '-'"
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(expected), "\(result.stderr)")
        #expect(snapshot(scratch.folder) == before)
    }

    @Test(arguments: [["-x"], ["-", "--help"], ["-9"]])
    func aConfigWithSuchANameIsRefusedNamingTheKeyAndHowToTakeItOut(_ names: [String]) async throws {
        let scratch = try Scratch()
        let config = try writeConfig(scratch, names)
        for command in [["config", "check"], ["pull"], ["status"]] {
            let result = try await feedsync(command + ["--config", config])
            #expect(result.status == 78, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("feeds[1].name: \"\(names[0])\" begins with '-'") && result.stderr.contains("feedsync remove -- \(names[0])"),
                    "\(command): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one sentence: \(result.stderr)")
        }
    }

    @Test(arguments: [["remove", "--", "NAME", "--config", "CONFIG"], ["remove", "--config", "CONFIG", "--", "NAME"],
                      ["--config", "CONFIG", "remove", "--", "NAME"], ["remove", "--purge", "--config", "CONFIG", "--", "NAME"]])
    func anOldConfigsDashNameIsRemovedAfterADoubleDash(_ pattern: [String]) async throws {
        for name in ["-x", "--help", "-h", "-V"] {
            let scratch = try Scratch()
            let config = try writeConfig(scratch, [name, "kept"])
            var arguments = pattern.map { $0 == "CONFIG" ? config : $0 == "NAME" ? name : $0 }
            // `--config` after `--` is a name, not an option: the CONFIG goes before it.
            if let end = arguments.firstIndex(of: "--"), arguments[end...].contains(config) {
                arguments = Array(arguments[..<end]) + ["--config", config, "--", name]
            }
            let result = try await feedsync(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout.contains("removed feed \(name) from"), "\(arguments): \(result.stdout)")
            let check = try await feedsync(["config", "check", "--config", config])
            #expect(check.status == 0 && check.stdout.contains("2 feeds (blog, kept)"), "\(check.stdout)\(check.stderr)")
        }
    }

    @Test func withoutADoubleDashTheNameIsAnUnknownOptionThatSaysHowToPassIt() async throws {
        let scratch = try Scratch()
        let config = try writeConfig(scratch, ["-x"])
        let before = snapshot(scratch.folder)
        let result = try await feedsync(["remove", "-x", "--config", config])
        #expect(result.status == 64 && result.stderr.contains("unknown option -x; to pass an argument that begins with '-', put -- before it"), "\(result.stderr)")
        #expect(snapshot(scratch.folder) == before)
    }

    @Test func aDoubleDashEndsOptionsInEveryCommandThatTakesAnArgument() async throws {
        let scratch = try Scratch()
        let config = try writeConfig(scratch, [])
        let cases: [([String], Int32, String)] = [
            (["remove", "--config", config, "--", "--purge"], 64, #"has no feed named "--purge""#),
            (["remove", "--config", config, "--", "-h"], 64, #"has no feed named "-h""#),
            (["logout", "--config", config, "--", "-V"], 64, #"has no feed named "-V""#),
            (["search", "--config", config, "--", "-term"], 66, "nothing synced yet"),
            (["read", "--config", config, "--", "-1"], 66, "nothing synced yet"),
            (["add", "--config", config, "--", "-x.opml"], 66, "reading -x.opml: no such file"),
            (["login", "--config", config, "--", "mastodon", "http://-x"], 64, #""http://-x" is plain http"#),
            (["completion", "--", "--help"], 64, "name the shell"),
            (["config", "check", "--config", config, "--", "--help"], 64, "takes no arguments"),
        ]
        for (arguments, status, words) in cases {
            let result = try await feedsync(arguments)
            #expect(result.status == status, "\(arguments): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains(words) && !result.stderr.contains("unknown option"), "\(arguments): \(result.stderr)")
            #expect(!result.stdout.contains("usage:") && !result.stdout.hasPrefix("feedsync "), "not help or the version: \(result.stdout)")
        }
    }

    @Test func aLoginFeedNamedWithADashCanBeLoggedOutOf() async throws {
        let scratch = try Scratch()
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data("""
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "-sky", "posts": {"integration": "bluesky", "identifier": "me.test", "appPasswordFile": "sky.app-password", "timeline": "home"}},
                       {"name": "blog", "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/feed"}}]}
            """.utf8).write(to: url)
        let password = scratch.folder.appendingPathComponent("sky.app-password")
        try Data("abcd-efgh-ijkl-mnop\n".utf8).write(to: password)
        let result = try await feedsync(["logout", "--config", url.path, "--", "-sky"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: password.path))
        let check = try await feedsync(["config", "check", "--config", url.path])
        #expect(check.status == 0, "\(check.stderr)")
    }
}
