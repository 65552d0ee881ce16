import Foundation
import Testing

/// `feedsync star` and `unstar` as real processes over a real SQLite file: the same ID forms and
/// errors as `read`, kept through a full re-sync, listed by `posts --starred`.
@Suite(.endToEnd, .serialized) struct StarEndToEndTests {
    @Test func starsAreSetListedKeptThroughAFullResyncAndTakenAway() async throws {
        let server = try ReferenceServer(posts: 30)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)

        #expect(try await feedsync(["star", "home/p0000030", "--config", config]).stdout == "home/p0000030 starred\n")
        #expect(try await feedsync(["star", "p0000012", "--config", config]).stdout == "home/p0000012 starred\n")
        #expect(try await feedsync(["star", "p0000005", "--feed", "home", "--config", config]).stdout == "home/p0000005 starred\n")
        #expect(try await feedsync(["read", "p0000012", "--config", config]).status == 0)

        let listed = try await feedsync(["posts", "--starred", "--config", config, "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.compactMap { $0["id"] as? String } == ["p0000030", "p0000012", "p0000005"])
        #expect(rows?.compactMap { $0["starred"] as? Bool } == [true, true, true])
        #expect(rows?.compactMap { $0["read"] as? Bool } == [false, true, false])
        let text = try await feedsync(["posts", "--starred", "--unread", "--limit", "1", "--config", config])
        #expect(text.stdout.hasPrefix("home/p0000030 ") && text.stdout.contains("[unread, starred"), "\(text.stdout)")

        #expect(try await feedsync(["pull", "--config", config, "--full"]).status == 0)
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM post_state WHERE starred_at IS NOT NULL") == "3",
                "a re-sync keeps stars")
        let csv = try await feedsync(["export", "--format", "csv", "--config", config])
        #expect(csv.stdout.hasPrefix("feed,id,") && csv.stdout.split(separator: "\r\n").first?.hasSuffix(",read,starred") == true)

        #expect(try await feedsync(["unstar", "home/p0000012", "--config", config]).stdout == "home/p0000012 unstarred\n")
        let after = try await feedsync(["posts", "--starred", "--config", config, "--json"])
        let left = try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]]
        #expect(left?.compactMap { $0["id"] as? String } == ["p0000030", "p0000005"])
    }

    @Test func aBadIDIsRefusedAsReadRefusesIt() async throws {
        let server = try ReferenceServer(posts: 3)
        let scratch = try Scratch()
        let config = try scratch.writeConfig(baseURL: server.baseURL)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)

        let unknown = try await feedsync(["star", "p-nope", "--config", config])
        #expect(unknown.status == 66 && unknown.stderr.split(separator: "\n").count == 1, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("starring post p-nope") && unknown.stderr.contains("feedsync posts"), "\(unknown.stderr)")
        let none = try await feedsync(["unstar", "--config", config])
        #expect(none.status == 64 && none.stderr.contains("give exactly one post ID"), "\(none.stderr)")
        let otherFeed = try await feedsync(["star", "p0000001", "--feed", "nowhere", "--config", config])
        #expect(otherFeed.status == 64, "\(otherFeed.stderr)")
        let hostile = try await feedsync(["star", "p\u{1b}[31m", "--config", config])
        #expect(hostile.status == 66 && !hostile.stderr.contains("\u{1b}"), "control characters are shown escaped")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM post_state WHERE starred_at IS NOT NULL") == "0")
    }
}
