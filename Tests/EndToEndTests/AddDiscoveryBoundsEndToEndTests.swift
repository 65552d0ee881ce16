import Foundation
import Testing

extension AddRemoveEndToEndTests {
    /// What the fixture server answered, by the Host each request named (`127.0.0.1:P` and
    /// `localhost:P` are two hosts to feedsync, one server here).
    func requestsByHost(_ server: ReferenceServer) async throws -> [String: Int] {
        try await server.control("GET", "/_control/hosts") as? [String: Int] ?? [:]
    }

    func writeOPML(_ scratch: Scratch, _ outlines: [String]) throws -> String {
        let file = scratch.folder.appendingPathComponent("subs.opml")
        try Data(("<opml version=\"2.0\"><body>\n" + outlines.joined(separator: "\n") + "\n</body></opml>\n").utf8).write(to: file)
        return file.path
    }

    /// One site and one feed, each listed many times and spelled many ways (case, default port,
    /// dot segments, an escaped unreserved character, a fragment): each is fetched once, added once.
    @Test func anOPMLThatListsOneSiteManyWaysFetchesItOnce() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, server)
        let base = server.baseURL, port = server.port
        let sites = ["\(base)/site/3/", "HTTP://127.0.0.1:\(port)/site/3/#about", "\(base)/site/./3/", "\(base)/site/%33/",
                     "\(base)/blog/../site/3/"] + Array(repeating: "\(base)/site/3/", count: 20)
        let listed = ["\(base)/feeds/2.xml", "\(base)/feeds/2.xml#latest", "\(base)/feeds/x/../2.xml", "\(base)/feeds/0.xml#in-config"]
        let opml = try writeOPML(scratch, sites.map { #"<outline text="Three" htmlUrl="\#($0)"/>"# }
                                          + listed.map { #"<outline text="Two" type="rss" xmlUrl="\#($0)"/>"# })
        let added = try await feedsync(["add", opml, "--config", config])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.hasPrefix("added 2 web feeds from \(opml) to \(config) (27 already there or listed twice; 1 found on its site's page)"),
                "\(added.stdout)")
        // The page, then the feed it names: two requests for 25 listings.
        #expect(try await requestsByHost(server) == ["127.0.0.1:\(port)": 2])
        #expect(try feeds(config).compactMap { ($0["posts"] as? [String: String])?["url"] }
                == ["\(base)/feeds/0.xml", "\(base)/feeds/2.xml", "\(base)/atom/3.xml"])
    }

    /// Ten sites on one host and two on another, with a budget of 4 requests per host: two sites
    /// of each are found (a page and a feed each), the other eight are skipped and named, and no
    /// host is sent a request past its budget.
    @Test(arguments: [(4, 2), (6, 3)] as [(Int, Int)])
    func anOPMLImportStaysWithinItsPerHostBudgetAndSaysWhatItSkipped(_ budget: Int, _ perHost: Int) async throws {
        let server = try startWebFeeds(feeds: 12)
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, server)
        let busy = "localhost:\(server.port)", quiet = "127.0.0.1:\(server.port)"
        let outlines = (1...10).map { #"<outline text="Busy \#($0)" htmlUrl="http://\#(busy)/site/\#($0)/"/>"# }
            + [#"<outline text="Quiet 11" htmlUrl="http://\#(quiet)/site/11/"/>"#, #"<outline text="Quiet 10" htmlUrl="http://\#(quiet)/site/10/"/>"#]
        let opml = try writeOPML(scratch, outlines)
        let added = try await feedsync(["add", opml, "--per-host", String(budget), "--config", config])
        #expect(added.status == 0, "\(added.stderr)")
        let found = perHost + 2
        #expect(added.stdout.hasPrefix("added \(found) web feeds from \(opml) to \(config) (\(found) found on their sites' pages; "
                                       + "\(10 - perHost) skipped: \(budget) requests to one host were spent (--per-host))"), "\(added.stdout)")
        #expect(try await requestsByHost(server) == [busy: 2 * perHost, quiet: 4])
        for site in (perHost + 1)...10 {
            let warning = "feedsync: warning: skipped: \"Busy \(site)\" http://\(busy)/site/\(site)/: the \(budget) requests to \(busy) "
                + "that finding feeds may send were spent (--per-host)"
            #expect(added.stderr.components(separatedBy: warning).count == 2, "said once: \(added.stderr)")
        }
        #expect(!added.stderr.contains("\"Busy \(perHost)\""), "\(added.stderr)")
        let urls = try feeds(config).compactMap { ($0["posts"] as? [String: String])?["url"] }
        #expect(Array(urls.dropFirst()) == (1...perHost).map { "http://\(busy)/atom/\($0).xml" } + ["\(server.baseURL)/atom/11.xml", "\(server.baseURL)/atom/10.xml"])
    }

    /// Sites whose pages never answer are skipped at the import's deadline, named, and the feeds
    /// the file lists are added all the same; when nothing else is left, nothing is written.
    @Test func anOPMLImportStopsAtItsDeadlineAndSaysWhatItSkipped() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, bytes) = try writeHandwrittenConfig(scratch, server)
        let stuck = ["\(server.baseURL)/slow/600000/site/1/", "http://localhost:\(server.port)/slow/600000/site/2/"]
        let stuckOutlines = stuck.enumerated().map { #"<outline text="Stuck \#($0.offset)" htmlUrl="\#($0.element)"/>"# }
        let onlyStuck = try writeOPML(scratch, stuckOutlines)
        let refused = try await feedsync(["add", onlyStuck, "--deadline", "1s", "--config", config])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("no feed it lists could be added: 2 of its sites were skipped"), "\(refused.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: config)) == bytes, "nothing was written")

        let opml = try writeOPML(scratch, stuckOutlines + [#"<outline text="Two" type="rss" xmlUrl="\#(server.baseURL)/feeds/2.xml"/>"#])
        let added = try await feedsync(["add", opml, "--deadline", "1.5s", "--config", config])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.hasPrefix("added 1 web feed from \(opml) to \(config) (2 skipped: the deadline of 1.5s passed (--deadline))"), "\(added.stdout)")
        for (index, site) in stuck.enumerated() {
            #expect(added.stderr.contains("feedsync: warning: skipped: \"Stuck \(index)\" \(site): the deadline of 1.5s for finding feeds passed first (--deadline)"),
                    "\(added.stderr)")
        }
    }

    @Test(arguments: [
        (["--deadline", "0s"], "--deadline \"0s\" is not a duration from 1s to 24h"),
        (["--deadline", "soon"], "--deadline \"soon\" is not a duration"),
        (["--deadline", "25h"], "is not a duration from 1s to 24h"),
        (["--per-host", "0"], "--per-host \"0\" is not a whole number from 1 to 100000"),
        (["--per-host", "2.5"], "--per-host \"2.5\" is not a whole number"),
        (["--per-host", "many"], "is not a whole number"),
    ])
    func badBoundsAreRefusedBeforeAnythingIsFetched(_ flags: [String], _ sentence: String) async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, server)
        let opml = try writeOPML(scratch, [#"<outline text="Three" htmlUrl="\#(server.baseURL)/site/3/"/>"#])
        let result = try await feedsync(["add", opml] + flags + ["--config", config])
        #expect(result.status == 64 && result.stderr.contains(sentence), "\(result.stderr)")
        #expect(try await requestsByHost(server).isEmpty)
    }

    @Test func theBoundsApplyToAnOPMLFileOnly() async throws {
        let server = try startWebFeeds()
        let scratch = try Scratch()
        let (config, _) = try writeHandwrittenConfig(scratch, server)
        let result = try await feedsync(["add", "\(server.baseURL)/site/3/", "--per-host", "5", "--config", config])
        #expect(result.status == 64 && result.stderr.contains("--per-host applies to an OPML file's sites, not to one address"), "\(result.stderr)")
        #expect(try await requestsByHost(server).isEmpty)
    }
}
