import Foundation
import Testing

/// What a sweep deletes, with the real binary against the fixture servers: only the posts the
/// server no longer lists. A post the server still lists but the mapping skipped stays; an item
/// skipped without an id withholds the sweep, and says so.
@Suite(.endToEnd) struct SweepEndToEndTests {
    func storedIDs(_ scratch: Scratch, feed: String) async throws -> [String] {
        try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = '\(feed)' ORDER BY id").split(separator: "\n").map(String.init)
    }

    @Test func aFullPullKeepsAPostTheServerStillListsThoughItsDateCannotBeRead() async throws {
        let server = try ReferenceServer(posts: 20)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        let before = try await storedIDs(scratch, feed: "home")
        #expect(before.count == 20 && before.contains("p0000005"))

        _ = try await server.control("POST", "/_control/corrupt?id=p0000005&field=created_at&value=not-a-date")
        let full = try await feedsync(["pull", "--config", config, "--full"])

        #expect(full.status == 0, "\(full.stderr)")
        #expect(full.stdout.contains("0 deleted") && full.stdout.contains("1 skipped"), "\(full.stdout)")
        #expect(try await storedIDs(scratch, feed: "home") == before, "the skipped post is still listed, so it stays")
    }

    @Test func aSwapKeepsAStatusTheNewServerStillListsThoughItsDateCannotBeRead() async throws {
        let old = try ReferenceServer(script: "Fixtures/mastodon/server.py", arguments: ["--statuses", "20", "--token", "tok-abc"])
        let new = try ReferenceServer(script: "Fixtures/mastodon/server.py", arguments: ["--statuses", "20", "--token", "tok-abc"])
        let ids = try await new.control("GET", "/_control/timeline?name=home")["ids"] as? [String] ?? []
        try #require(ids.count == 20)
        try #require(try await old.control("GET", "/_control/timeline?name=home")["ids"] as? [String] == ids, "both serve the same statuses")
        let scratch = try Scratch()
        let environment = ["MASTODON_TOKEN": "tok-abc"]
        #expect(try await feedsync(["pull", "--config", try scratch.writeMastodonConfig(server: old.baseURL)], environment: environment).status == 0)
        #expect(try await storedIDs(scratch, feed: "social") == ids.sorted())

        _ = try await new.control("POST", "/_control/corrupt?id=\(ids[7])&field=created_at&value=not-a-date")
        let swapped = try await feedsync(["pull", "--config", try scratch.writeMastodonConfig(server: new.baseURL)], environment: environment)

        #expect(swapped.status == 0, "\(swapped.stderr)")
        #expect(swapped.stderr.contains("now syncs from mastodon \(new.baseURL)"), "\(swapped.stderr)")
        #expect(try await storedIDs(scratch, feed: "social") == ids.sorted(), "the skipped status is still listed, so it stays")
    }

    @Test func anItemSkippedWithoutAnIdWithholdsTheSweepAndStatusSaysSo() async throws {
        let old = try ReferenceServer(posts: 20)
        // The same feed without its newest post, and one post whose id cannot be read.
        let new = try ReferenceServer(posts: 19)
        let scratch = try Scratch()
        #expect(try await feedsync(["pull", "--config", try scratch.writeConfig(baseURL: old.baseURL)]).status == 0)
        let before = try await storedIDs(scratch, feed: "home")
        #expect(before.count == 20)

        _ = try await new.control("POST", "/_control/corrupt?id=p0000003&field=id&value=")
        let config = try scratch.writeConfig(baseURL: new.baseURL)
        let swapped = try await feedsync(["pull", "--config", config])

        #expect(swapped.status == 0, "\(swapped.stderr)")
        #expect(swapped.stderr.contains("feed home: nothing was deleted as gone, since an item was skipped without an id"), "\(swapped.stderr)")
        #expect(try await storedIDs(scratch, feed: "home") == before, "p0000020 may be gone, but the walk cannot tell which")
        let status = try await feedsync(["status", "--config", config])
        #expect(status.stdout.contains("  no sweep:     nothing was deleted as gone, since an item was skipped without an id"), "\(status.stdout)")
        let json = try await feedsync(["status", "--config", config, "--json"])
        #expect(json.stdout.contains(#""sweepWithheld""#), "\(json.stdout)")

        // A walk that reads every id sweeps again, and status no longer says it did not.
        _ = try await new.control("POST", "/_control/corrupt?id=p0000003&field=id&value=p0000003")
        let full = try await feedsync(["pull", "--config", config, "--full"])
        #expect(full.status == 0, "\(full.stderr)")
        #expect(try await storedIDs(scratch, feed: "home") == before.filter { $0 != "p0000020" })
        #expect(!(try await feedsync(["status", "--config", config]).stdout.contains("no sweep")))
    }
}
