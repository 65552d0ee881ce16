import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The served feeds read back by feedsync's own web feed integration: a second store whose two
/// `webfeed` feeds are the first store's `/feeds/home.atom` and `/feeds/home.json` (reached with
/// a feed token, as a reader that cannot send a password would) holds the same posts: each by
/// its time, its text and its author (served as `Name (@handle)`).
@Suite(.endToEnd, .serialized) struct ServedFeedRoundTripEndToEndTests {
    @Test func theServedAtomAndJSONFeedSyncIntoASecondStoreAsTheSamePosts() async throws {
        let server = try ReferenceServer(posts: 30)
        let scratch = try Scratch()
        let (daemon, base) = try await ReaderListenerEndToEndTests.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }
        let config = scratch.folder.appendingPathComponent("feedsync.json").path
        let made = try await feedsync(["serve-user", "token", "ada", "home", "--config", config])
        let paths = made.stdout.split(separator: "\n").map(String.init)
        try #require(paths.count == 2, "\(made.stderr)")

        let second = try Scratch()
        let copy = second.folder.appendingPathComponent("copy.json")
        try Data("""
            {"store": {"integration": "sqlite", "path": "copy.sqlite"},
             "feeds": [{"name": "atom", "posts": {"integration": "webfeed", "url": "\(base + paths[0])&n=100"}},
                       {"name": "json", "posts": {"integration": "webfeed", "url": "\(base + paths[1])&n=100"}}]}
            """.utf8).write(to: copy)
        let pulled = try await feedsync(["pull", "--config", copy.path])
        #expect(pulled.status == 0, "\(pulled.stdout) \(pulled.stderr)")

        let database = second.folder.appendingPathComponent("copy.sqlite")
        let row = "created_at || ' ' || replace(text, char(10), '/') || ' ' || author_name"
        // The served author is "Name (@handle)", which the web feed keeps as the author's name.
        let served = "created_at || ' ' || replace(text, char(10), '/') || ' ' || author_name || ' (@' || author_handle || ')'"
        let original = try await sqlite(scratch.database, "SELECT \(served) FROM posts WHERE feed = 'home' ORDER BY created_at, id")
        #expect(original.split(separator: "\n").count == 30)
        for feed in ["atom", "json"] {
            let copied = try await sqlite(database, "SELECT \(row) FROM posts WHERE feed = '\(feed)' ORDER BY created_at, id")
            #expect(copied.split(separator: "\n").count == 30, "\(feed)")
            #expect(Set(copied.split(separator: "\n")) == Set(original.split(separator: "\n")), "\(feed):\n\(copied.prefix(600))\n---\n\(original.prefix(600))")
        }
    }
}
