import Foundation
import Testing

extension AddRemoveEndToEndTests {
    /// An OPML outline that names only its site is added with the site's address, and its first
    /// pull finds the feed on the page, as for any feed url that answers with HTML.
    @Test func anOutlineWithOnlyAnHtmlUrlIsAddedAsItsSiteAndItsFeedIsDiscoveredOnPull() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, server)
        let opml = """
            <opml version="2.0"><body>
            <outline text="Two" type="rss" xmlUrl="\(server.baseURL)/feeds/2.xml"/>
            <outline text="Site three" htmlUrl="\(server.baseURL)/site/3/"/>
            </body></opml>
            """
        let file = scratch.folder.appendingPathComponent("subs.opml")
        try Data(opml.utf8).write(to: file)
        let added = try await feedsync(["add", file.path, "--config", config])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.hasPrefix("added 2 web feeds from \(file.path) to \(config) (1 by its site's address; its feed is found on the first pull)"),
                "\(added.stdout)")
        let urls = try feeds(config).compactMap { ($0["posts"] as? [String: String])?["url"] }
        #expect(urls.suffix(2) == ["\(server.baseURL)/feeds/2.xml", "\(server.baseURL)/site/3/"])
        #expect(try await requestCount(server, "/site/3/") == 0, "nothing is fetched while adding")

        let pulled = try await feedsync(["pull", "--config", config])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(try await postCount(scratch.database, feed: "site-three") == 10, "\(pulled.stdout)")
        let status = try await feedsync(["status", "--config", config])
        #expect(status.stdout.contains("discovered:   \(server.baseURL)/atom/3.xml (the feed the page \(server.baseURL)/site/3/ names)"),
                "\(status.stdout)")
    }
}
