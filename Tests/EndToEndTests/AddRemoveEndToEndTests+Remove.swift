import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `feedsync remove` (and `--purge`), and what both commands show in `--help`, completion and to
/// a running daemon.
extension AddRemoveEndToEndTests {
    @Test func removeKeepsThePostsAndPurgeDeletesOnlyThatFeeds() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, server, extra: """
            ,
                    {"name": "second", "posts": {"integration": "webfeed", "url": "\(server.baseURL)/feeds/1.xml"}},
                    {"name": "third", "posts": {"integration": "webfeed", "url": "\(server.baseURL)/feeds/2.xml"}}
            """)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        #expect(try await sqlite(scratch.database, "SELECT feed, COUNT(*) FROM posts GROUP BY feed ORDER BY feed") == "first|10\nsecond|10\nthird|10")
        _ = try await feedsync(["read", "second/feed-1-item-3", "--config", config])

        let kept = try await feedsync(["remove", "second", "--config", config])
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.stdout == "removed feed second from \(config)\nits posts stay in the store; `feedsync remove second --purge` would delete them\n")
        #expect(try feeds(config).compactMap { $0["name"] as? String } == ["first", "third"])
        #expect(try await postCount(scratch.database, feed: "second") == 10)

        let purged = try await feedsync(["remove", "third", "--purge", "--config", config])
        #expect(purged.status == 0, "\(purged.stderr)")
        #expect(purged.stdout.hasSuffix("purged 10 posts of third from the store, with its authors, videos, read marks, runs and cursor\n"), "\(purged.stdout)")
        #expect(try await sqlite(scratch.database, "SELECT feed, COUNT(*) FROM posts GROUP BY feed ORDER BY feed") == "first|10\nsecond|10")
        #expect(try await sqlite(scratch.database, """
            SELECT (SELECT COUNT(*) FROM users WHERE feed = 'third') + (SELECT COUNT(*) FROM sync_runs WHERE feed = 'third')
                 + (SELECT COUNT(*) FROM feeds WHERE name = 'third');
            SELECT COUNT(*) FROM post_state WHERE feed = 'second';
            SELECT COUNT(*) FROM posts_fts WHERE posts_fts MATCH 'feed';
            """) == "0\n1\n20")

        // A name the config does not have: one sentence, nothing written.
        let before = try bytes(config)
        let unknown = try await feedsync(["remove", "nothere", "--config", config])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("feedsync: \(config) has no feed named \"nothere\"\n"))
        #expect(try await feedsync(["remove", "third", "--config", config]).status == 64, "third is gone already")
        #expect(try bytes(config) == before)

        // A feed removed earlier without --purge can have its posts purged later.
        let later = try await feedsync(["remove", "second", "--purge", "--config", config])
        #expect(later.status == 0, "\(later.stderr)")
        #expect(later.stdout == "second is not in \(config); purged its 10 stored posts with its authors, videos, read marks, runs and cursor\n")
        #expect(try await sqlite(scratch.database, "SELECT feed, COUNT(*) FROM posts GROUP BY feed ORDER BY feed") == "first|10")
        #expect(try bytes(config) == before)
    }

    @Test func theLastFeedIsRemovedLeavingTheRestOfTheFileAsWritten() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, original) = try writeHandwrittenConfig(scratch, server)
        let result = try await feedsync(["remove", "first", "--purge", "--config", config])
        #expect(result.status == 0, "\(result.stderr)")
        let expected = String(decoding: original, as: UTF8.self)
            .replacingOccurrences(of: #"\[\s*\{ "name": "first"[\s\S]*\}\s*\]"#, with: "[]", options: [.regularExpression])
        #expect(String(decoding: try bytes(config), as: UTF8.self) == expected)
        #expect(expected.contains(#""feeds": []"#) && expected.contains("$comment"), "\(expected)")
        #expect(mode(config) == 0o640)
    }

    @Test func aFeedOfAnOPMLEntryIsRemovedFromItsFile() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let opml = scratch.folder.appendingPathComponent("blogs.opml")
        try Data(#"<opml version="2.0"><body><outline title="Daring" xmlUrl="\#(server.baseURL)/feeds/1.xml"/></body></opml>"#.utf8).write(to: opml)
        let (config, original) = try writeHandwrittenConfig(scratch, server, extra: #", {"name": "blogs", "opml": "blogs.opml"}"#)
        let result = try await feedsync(["remove", "blogs.daring", "--config", config])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("feedsync: \(config) has no entry for \"blogs.daring\": it is a feed of an OPML file (blogs.opml: "), "\(result.stderr)")
        #expect(result.stderr.contains("; remove it from that OPML file\n"))
        #expect(try await feedsync(["remove", "blogs.other", "--config", config]).stderr.hasPrefix("feedsync: \(config) has no feed named \"blogs.other\"\n"))
        #expect(try bytes(config) == original)
    }

    @Test func helpAndCompletionKnowBothCommands() async throws {
        let help = try await feedsync(["--help"])
        #expect(help.stdout.contains("\n  add ") && help.stdout.contains("\n  remove "), "\(help.stdout)")
        #expect(try await feedsync(["help", "add"]).stdout.hasPrefix("usage: feedsync add WHAT [--name NAME] [--interval I] [--timeline T] [--deadline D] [--per-host N] [--basic-user USER] [--password-env VAR] [--password-file PATH] [--bearer-env VAR] [--bearer-file PATH] [--config PATH]\n"))
        #expect(try await feedsync(["remove", "--help"]).stdout.hasPrefix("usage: feedsync remove NAME [--purge] [--config PATH]\n"))
        #expect(try await feedsync(["completion", "bash"]).stdout.contains(#""remove") opts="--config --purge --help""#))
        #expect(try await feedsync(["completion", "zsh"]).stdout.contains("\"add\") _values 'option' '--config' '--name' '--interval' '--timeline'"))
        #expect(try await feedsync(["completion", "fish"]).stdout.contains("-a 'remove'"))
        let noWhat = try await feedsync(["add"])
        #expect(noWhat.status == 64)
        let empty = try Scratch()
        let timeline = try await feedsync(["add", "example.org", "--timeline", "home"], in: empty.folder)
        #expect(timeline.status == 64 && timeline.stderr.hasPrefix("feedsync: --timeline applies to Mastodon and Bluesky accounts, not to a web feed\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.folder.path).isEmpty, "nothing was created")
    }

    // MARK: with a daemon

    @Test func aRunningDaemonIsToldAndSyncsTheAddedFeedAndAPurgeWaitsForItsWrites() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, server)
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { try await postCount(scratch.database, feed: "first") == 10 }, "\(daemon.log)")

        let added = try await feedsync(["add", "\(server.baseURL)/feeds/3.xml", "--config", config])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("told feedsyncd (pid \(daemon.pid)) to reload the config"), "\(added.stdout)")
        #expect(try await eventually { try await postCount(scratch.database, feed: "feed-3") == 10 }, "\(daemon.log)")

        let purged = try await feedsync(["remove", "feed-3", "--purge", "--config", config])
        #expect(purged.status == 0, "\(purged.stderr)")
        #expect(purged.stdout.contains("told feedsyncd (pid \(daemon.pid)) to reload the config"))
        #expect(try await eventually { daemon.log.contains("event=feed_removed feed=feed-3") }, "\(daemon.log)")
        #expect(try await postCount(scratch.database, feed: "feed-3") == 0)
        #expect(try await postCount(scratch.database, feed: "first") == 10)
    }
}
