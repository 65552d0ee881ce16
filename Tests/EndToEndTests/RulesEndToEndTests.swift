import Foundation
import Testing

/// Rules against the local feed server: what a pull stores and counts, `rules apply`, and what
/// `config check` says of bad rules.
@Suite(.endToEnd) struct RulesEndToEndTests {
    /// A config of web feeds (`name`, path, the feed's own rules JSON or `nil`) and global rules.
    func writeConfig(_ scratch: Scratch, _ server: ReferenceServer, _ feeds: [(String, String, String?)], global: String? = nil) throws -> String {
        let entries = feeds.map { name, path, rules in
            #"{"name": "\#(name)", "interval": "1h", "posts": {"integration": "webfeed", "url": "\#(server.baseURL)\#(path)"}"#
                + (rules.map { #", "rules": \#($0)"# } ?? "") + "}"
        }
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [\#(entries.joined(separator: ", "))]"#
            + (global.map { #", "rules": \#($0)"# } ?? "") + "}"
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    @Test func aPullStoresWhatTheRulesKeepCountsWhatTheyBlockAndAFullPullDeletesNoneOfIt() async throws {
        let server = try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "3", "--items", "10"])
        let scratch = try Scratch()
        // blog: its own rules first (item 9 kept, items 0–4 blocked), then the global one (item 7).
        let config = try writeConfig(scratch, server, [
            ("blog", "/feeds/1.xml", #"[{"keep": {"title": {"regex": "item 9$"}}}, {"block": {"title": {"regex": "item [0-4]$"}}}]"#),
            ("news", "/feeds/2.xml", nil),
        ], global: #"[{"block": {"text": ["item 7 of", "item 9 of"]}}]"#)
        let pulled = try await feedsync(["pull", "--config", config])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(pulled.stdout.contains("blog: 4 new, 0 updated, 0 deleted, 0 skipped, 6 filtered,"), "\(pulled.stdout)")
        #expect(pulled.stdout.contains("news: 8 new, 0 updated, 0 deleted, 0 skipped, 2 filtered,"), "\(pulled.stdout)")
        #expect(try await sqlite(scratch.database, "SELECT group_concat(id, ' ') FROM (SELECT id FROM posts WHERE feed = 'blog' ORDER BY id)")
                == "feed-1-item-5 feed-1-item-6 feed-1-item-8 feed-1-item-9")

        // The server still lists the blocked items: a walk from the start counts them as seen.
        let full = try await feedsync(["pull", "--full", "--config", config])
        #expect(full.status == 0, "\(full.stderr)")
        #expect(full.stdout.contains("blog: 0 new, 0 updated, 0 deleted"), "\(full.stdout)")
        #expect(try await postCount(scratch.database, feed: "blog") == 4)
    }

    @Test func rulesApplyRemovesWhatTheCurrentRulesBlockAndKeepsTheMarksOfWhatStays() async throws {
        let server = try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "2", "--items", "6"])
        let scratch = try Scratch()
        let before = try writeConfig(scratch, server, [("blog", "/feeds/1.xml", nil)])
        #expect(try await feedsync(["pull", "--config", before]).status == 0)
        #expect(try await feedsync(["read", "feed-1-item-5", "--config", before]).status == 0)
        #expect(try await feedsync(["read", "feed-1-item-1", "--config", before]).status == 0)
        let after = try writeConfig(scratch, server, [("blog", "/feeds/1.xml", #"[{"block": {"title": {"regex": "item [0-2]$"}}}]"#)])

        let dry = try await feedsync(["rules", "apply", "--dry-run", "--config", after])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("blog/feed-1-item-0  blocked by feeds[0].rules[0]"), "\(dry.stdout)")
        #expect(dry.stdout.contains("blog: would remove 3 of 6 stored posts (dry run: nothing removed)"), "\(dry.stdout)")
        #expect(try await postCount(scratch.database, feed: "blog") == 6)

        let applied = try await feedsync(["rules", "apply", "--feed", "blog", "--config", after])
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(applied.stdout.hasSuffix("blog: removed 3 of 6 stored posts\n"), "\(applied.stdout)")
        #expect(try await sqlite(scratch.database, "SELECT group_concat(id, ' ') FROM (SELECT id FROM posts WHERE feed = 'blog' ORDER BY id)")
                == "feed-1-item-3 feed-1-item-4 feed-1-item-5")
        let unread = try await feedsync(["posts", "--unread", "--config", after])
        #expect(!unread.stdout.contains("feed-1-item-5") && unread.stdout.contains("feed-1-item-4"), "the read mark of what stays stays: \(unread.stdout)")
        let again = try await feedsync(["rules", "apply", "--config", after])
        #expect(again.stdout == "blog: removed 0 of 3 stored posts\n", "\(again.stdout)")
    }

    @Test func aBadRuleStopsTheConfigWithItsKeyPathAndARuleThatBlocksEverythingIsWarnedOf() async throws {
        let server = try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "1", "--items", "1"])
        let scratch = try Scratch()
        let cases: [(feed: String?, global: String?, path: String, reason: String)] = [
            (#"[{"block": {"text": {"regex": "(unclosed"}}}]"#, nil, "feeds[0].rules[0].block.text", "does not compile"),
            (nil, #"[{"keep": {}}, {"block": {"title": {"regex": "a{2,1}"}}}]"#, "rules[1].block.title", "does not compile"),
            (#"[{"block": {"kind": "story"}}]"#, nil, "feeds[0].rules[0].block.kind", "is not post, reply, boost or repost"),
            (#"[{"drop": {}}]"#, nil, "feeds[0].rules[0].drop", "unknown key; valid keys here are \"block\", \"keep\""),
            (#"[{"keep": {}, "block": {}}]"#, nil, "feeds[0].rules[0]", "not both"),
        ]
        for (feed, global, path, reason) in cases {
            let config = try writeConfig(scratch, server, [("blog", "/feeds/0.xml", feed)], global: global)
            let check = try await feedsync(["config", "check", "--config", config])
            #expect(check.status == 78, "\(path): \(check.stdout)\(check.stderr)")
            #expect(check.stderr.contains("\(path):") && check.stderr.contains(reason), "\(check.stderr)")
        }
        let config = try writeConfig(scratch, server, [("blog", "/feeds/0.xml", #"[{"block": {"language": "de"}}, {"block": {}}]"#)])
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stderr.contains("warning: ") && check.stderr.contains("feeds[0].rules[1]: blocks every post"), "\(check.stderr)")
    }
}

/// Retention (`"keep"`) against the local feed server, whose items are all from January 2026.
@Suite(.endToEnd) struct RetentionEndToEndTests {
    func writeConfig(_ scratch: Scratch, _ server: ReferenceServer, feedKeep: String?, globalKeep: String?) throws -> String {
        let feed = #"{"name": "blog", "interval": "1h", "posts": {"integration": "webfeed", "url": "\#(server.baseURL)/feeds/1.xml"}"#
            + (feedKeep.map { #", "keep": \#($0)"# } ?? "") + "}"
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [\#(feed)]"#
            + (globalKeep.map { #", "keep": \#($0)"# } ?? "") + "}"
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    func stored(_ scratch: Scratch) async throws -> String {
        try await sqlite(scratch.database, "SELECT group_concat(id, ' ') FROM (SELECT id FROM posts WHERE feed = 'blog' ORDER BY created_at)")
    }

    @Test func onlyTheNewestPostsStayButUnreadOnesAreKeptUnlessEvenUnread() async throws {
        let server = try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "2", "--items", "6"])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server, feedKeep: nil, globalKeep: #"{"posts": 2}"#)
        let first = try await feedsync(["pull", "--config", config])
        #expect(first.stdout.contains("blog: 6 new, 0 updated, 0 deleted, 0 skipped, 0 videos"), "all unread: none pruned: \(first.stdout)")
        for id in ["feed-1-item-0", "feed-1-item-1", "feed-1-item-5"] {
            #expect(try await feedsync(["read", id, "--config", config]).status == 0)
        }
        let second = try await feedsync(["pull", "--config", config])
        #expect(second.stdout.contains("blog: 0 new, 0 updated, 0 deleted, 0 skipped, 2 pruned,"), "\(second.stdout)")
        #expect(try await stored(scratch) == "feed-1-item-2 feed-1-item-3 feed-1-item-4 feed-1-item-5", "item 5 is among the newest two")

        // The feed's own "keep" takes the place of the config's.
        let evenUnread = try writeConfig(scratch, server, feedKeep: #"{"posts": 2, "evenUnread": true}"#, globalKeep: #"{"posts": 5}"#)
        let third = try await feedsync(["pull", "--config", evenUnread])
        #expect(third.stdout.contains("2 pruned,"), "\(third.stdout)")
        #expect(try await stored(scratch) == "feed-1-item-4 feed-1-item-5")

        // status tells what retention removed, in all, and when it last did.
        let status = try await feedsync(["status", "--config", evenUnread])
        #expect(status.stdout.contains("  retention:    removed 4 posts, last at 20"), "\(status.stdout)")
        let json = try await feedsync(["status", "--json", "--config", evenUnread])
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let row = (report?["feeds"] as? [[String: Any]])?.first { $0["feed"] as? String == "blog" }
        #expect(row?["prunedPosts"] as? Int == 4 && row?["prunedAt"] is String, "\(json.stdout)")
    }

    @Test func postsOlderThanTheAgeLimitAreNotStoredAgainAndABadKeepIsRefused() async throws {
        let server = try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "2", "--items", "4"])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server, feedKeep: #"{"days": 30}"#, globalKeep: nil)
        let pulled = try await feedsync(["pull", "--config", config])
        #expect(pulled.stdout.contains("blog: 0 new, 0 updated, 0 deleted, 0 skipped, 4 filtered,"), "\(pulled.stdout)")
        #expect(try await postCount(scratch.database, feed: "blog") == 0)

        for (keep, path, reason) in [(#"{"evenUnread": true}"#, "feeds[0].keep", "needs \"days\""),
                                     (#"{"days": 0}"#, "feeds[0].keep.days", "out of range"),
                                     (#"{"posts": 10, "unread": true}"#, "feeds[0].keep.unread", "unknown key")] {
            let bad = try writeConfig(scratch, server, feedKeep: keep, globalKeep: nil)
            let check = try await feedsync(["config", "check", "--config", bad])
            #expect(check.status == 78 && check.stderr.contains("\(path):") && check.stderr.contains(reason), "\(check.stderr)")
        }
    }
}
