import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A reader client nobody here wrote: newsboat (Debian's 2.21), whose `feedhq` source speaks
/// the Google Reader API (ClientLogin, `subscription/list`, then each stream's Atom under
/// `/reader/atom/`), run non-interactively against a real `feedsyncd`: it signs in, finds the
/// served feed and reads every post the store holds.
@Suite(.endToEnd, .serialized) struct NewsboatEndToEndTests {
    @Test func newsboatSignsInAndReadsEveryServedPost() async throws {
        let server = try ReferenceServer(posts: 12)
        let scratch = try Scratch()
        let (daemon, base) = try await ReaderListenerEndToEndTests.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }
        let config = scratch.folder.appendingPathComponent("newsboat.conf")
        try Data("""
            urls-source "feedhq"
            feedhq-url "\(base)"
            feedhq-login "ada"
            feedhq-password "correct horse battery"

            """.utf8).write(to: config)
        let urls = scratch.folder.appendingPathComponent("newsboat.urls")
        try Data().write(to: urls)
        let cache = scratch.folder.appendingPathComponent("newsboat.db")
        let newsboat = ["newsboat", "-C", config.path, "-u", urls.path, "-c", cache.path, "-x"]
        let reload = try await run(URL(fileURLWithPath: "/usr/bin/env"), newsboat + ["reload"])
        #expect(reload.status == 0, "\(reload.stdout) \(reload.stderr)")
        let unread = try await run(URL(fileURLWithPath: "/usr/bin/env"), newsboat + ["print-unread"])
        #expect(unread.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "12 unread articles", "\(unread.stdout) \(unread.stderr)")

        // What newsboat kept: the served feed by its stream, each post by its item id, as the store has them.
        let feeds = try await sqlite(cache, "SELECT rssurl || ' ' || title FROM rss_feed WHERE rssurl LIKE '\(base)%'")
        #expect(feeds == "\(base)/reader/atom/feed%2Fhome?n=20 feedsync: home", "\(feeds)")
        let guids = try await sqlite(cache, "SELECT guid FROM rss_item ORDER BY guid").split(separator: "\n")
        #expect(guids.count == 12 && guids.allSatisfy { $0.hasPrefix("tag:google.com,2005:reader/item/") }, "\(guids)")
        let stored = try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE feed = 'home'")
        #expect(stored == "12")
        let served = try await ReaderListenerEndToEndTests.curl(["-u", "ada:correct horse battery", base + "/feeds/home.atom"])
        #expect(Set(guids.map(String.init)) == Set(ServedFeedEndToEndTests.entries(served.body).ids), "the same posts as the served feed")
    }
}
