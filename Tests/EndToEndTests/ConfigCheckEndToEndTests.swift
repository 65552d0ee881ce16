import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `feedsync config check` only looks at the store: it never creates, upgrades or chmods it.
@Suite(.endToEnd) struct ConfigCheckEndToEndTests {
    func writeConfig(_ scratch: Scratch) throws -> String {
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data("""
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "blog", "maxAttempts": 1, "posts": {"integration": "webfeed", "url": "http://127.0.0.1:9/feed.xml"}}]}
            """.utf8).write(to: url)
        return url.path
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }

    @Test func aStoreOfAnOlderVersionIsLeftByteForByteAsItWas() async throws {
        let scratch = try Scratch()
        let config = try writeConfig(scratch)
        // A store an older feedsync wrote (one migration recorded), in the rollback journal
        // mode and with a mode that opening it to write would change (WAL, 0600).
        _ = try await sqlite(scratch.database, """
            CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL);
            INSERT INTO schema_migrations VALUES ('001_create_feed_tables', 1);
            CREATE TABLE feeds (name TEXT PRIMARY KEY, cursor TEXT);
            INSERT INTO feeds VALUES ('blog', 'etag');
            """)
        chmod(scratch.database.path, 0o644)
        let before = try Data(contentsOf: scratch.database)

        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("store: what it remembers (feeds discovered or moved) was not read: it is from an older feedsync ("),
                "\(check.stdout)")
        #expect(check.stdout.contains("the next `feedsync pull` upgrades it\n"), "\(check.stdout)")
        #expect(try Data(contentsOf: scratch.database) == before, "the file is byte-identical")
        #expect(mode(scratch.database.path) == 0o644, "its mode is unchanged")
        for side in ["-wal", "-shm", "-journal"] {
            #expect(!FileManager.default.fileExists(atPath: scratch.database.path + side), "no \(side) file was made")
        }
    }

    @Test func noStoreYetIsSaidInOneLineAndNothingIsCreated() async throws {
        let scratch = try Scratch()
        let config = try writeConfig(scratch)
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("store: what it remembers (feeds discovered or moved) was not read: nothing synced yet\n"), "\(check.stdout)")
        #expect(!FileManager.default.fileExists(atPath: scratch.database.path))
    }
}

extension ConfigCheckEndToEndTests {
    /// A site-only outline of an `opml` entry is discovered at its first pull, after the file was
    /// read: when its page names a feed the file lists too, `config check` says both poll it.
    @Test func aSiteOutlineWhoseFeedTheFileListsTooIsPointedOut() async throws {
        let server = try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "5", "--items", "3"])
        let scratch = try Scratch()
        try Data("""
            <opml version="2.0"><body>
            <outline text="Four's site" htmlUrl="\(server.baseURL)/site/4/"/>
            <outline text="Four" xmlUrl="\(server.baseURL)/atom/4.xml"/>
            </body></opml>
            """.utf8).write(to: scratch.folder.appendingPathComponent("subs.opml"))
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(#"{"feeds": [{"name": "blogs", "opml": "subs.opml", "interval": "1h"}]}"#.utf8).write(to: config)
        let before = try await feedsync(["config", "check", "--config", config.path])
        #expect(!before.stderr.contains("poll the same feed"), "nothing is known before a pull: \(before.stderr)")
        let pulled = try await feedsync(["pull", "--config", config.path])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let check = try await feedsync(["config", "check", "--config", config.path])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stderr.contains("feedsync: warning: feeds blogs.four-s-site and blogs.four poll the same feed \(server.baseURL)/atom/4.xml, "
                                      + "so its posts are stored under each name"), "\(check.stderr)")
    }
}

extension ConfigCheckEndToEndTests {
    /// A store of this version that no process has open is read as it is: no `-wal` or `-shm`
    /// file appears beside it.
    @Test func aCurrentStoreIsReadWithoutAFileMadeBesideIt() async throws {
        let scratch = try Scratch()
        let config = try writeConfig(scratch)
        _ = try await feedsync(["pull", "--config", config])  // the feed is out of reach; the store is made
        #expect(FileManager.default.fileExists(atPath: scratch.database.path))
        #expect(!FileManager.default.fileExists(atPath: scratch.database.path + "-wal"))
        let before = try Data(contentsOf: scratch.database)
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(!check.stdout.contains("was not read"), "\(check.stdout)")
        #expect(try Data(contentsOf: scratch.database) == before)
        for side in ["-wal", "-shm", "-journal"] {
            #expect(!FileManager.default.fileExists(atPath: scratch.database.path + side), "no \(side) file was made")
        }
    }
}
