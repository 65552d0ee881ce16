import Foundation
import Testing

extension AddRemoveEndToEndTests {
    /// An OPML outline that names only its site is added by the feed its page names, as
    /// `feedsync add URL` adds a site: not when the file or the config has that feed already,
    /// and not at all (said once) when the page names no feed.
    @Test func anOutlineWithOnlyAnHtmlUrlIsAddedByTheFeedItsPageNamesOnceAndOnlyIfItHasOne() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, server)
        let opml = """
            <opml version="2.0"><body>
            <outline text="Two" type="rss" xmlUrl="\(server.baseURL)/feeds/2.xml"/>
            <outline text="Site three" htmlUrl="\(server.baseURL)/site/3/"/>
            <outline text="Four" htmlUrl="\(server.baseURL)/site/4/"/>
            <outline text="Four" type="rss" xmlUrl="\(server.baseURL)/atom/4.xml"/>
            <outline text="Nothing here" htmlUrl="\(server.baseURL)/site/none/"/>
            </body></opml>
            """
        let file = scratch.folder.appendingPathComponent("subs.opml")
        try Data(opml.utf8).write(to: file)
        let added = try await feedsync(["add", file.path, "--config", config])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.hasPrefix("added 3 web feeds from \(file.path) to \(config) (1 already there or listed twice; "
                                       + "1 found on its site's page; 1 not added: its site names no feed it could read)"), "\(added.stdout)")
        let warning = "feedsync: warning: not added: \"Nothing here\" finding a feed at \(server.baseURL)/site/none/: the page names no feed"
        #expect(added.stderr.components(separatedBy: warning).count == 2, "said once: \(added.stderr)")
        // The site of Four is the feed the file lists: one feed, with the name of the outline that names the feed.
        let entries = try feeds(config).suffix(3)
        #expect(entries.compactMap { $0["name"] as? String } == ["two", "four", "site-three"], "\(entries)")
        #expect(entries.compactMap { ($0["posts"] as? [String: String])?["url"] }
                == ["\(server.baseURL)/feeds/2.xml", "\(server.baseURL)/atom/4.xml", "\(server.baseURL)/atom/3.xml"])

        let pulled = try await feedsync(["pull", "--config", config])
        #expect(pulled.status == 0, "nothing fails on every poll: \(pulled.stderr)")
        #expect(try await postCount(scratch.database, feed: "site-three") == 10, "\(pulled.stdout)")
        #expect(try await postCount(scratch.database, feed: "four") == 10, "\(pulled.stdout)")
    }
}
