import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `feedsync` and `feedsyncd` against the local feed server (Fixtures/webfeed/server.py), as real processes.
@Suite(.endToEnd) struct WebFeedEndToEndTests {
    func startServer(feeds: Int = 5, items: Int = 10) throws -> ReferenceServer {
        try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", String(feeds), "--items", String(items)])
    }

    /// A config whose feeds are `name: path on the server` (or a whole feeds[] entry when the value starts with `{`).
    func writeConfig(_ scratch: Scratch, _ server: ReferenceServer, _ feeds: [(String, String)], daemon: String = "{}") throws -> String {
        let entries = feeds.map { name, path in
            path.hasPrefix("{") ? path
                : #"{"name": "\#(name)", "interval": "1h", "posts": {"integration": "webfeed", "url": "\#(server.baseURL)\#(path)"}}"#
        }
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [\#(entries.joined(separator: ", "))], "daemon": \#(daemon)}"#
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    func requests(_ server: ReferenceServer, _ path: String) async throws -> [String: Int] {
        try await server.stats().byPath["GET \(path)"] ?? [:]
    }

    /// One request as the server logged it: when it came and when it was answered, in seconds
    /// on the server's clock. Timing read off the server holds however loaded the machine is.
    struct LoggedRequest { var status: Int; var start: Double; var end: Double }

    /// The server's clock now, and its log of requests to `path`, oldest first.
    func requestLog(_ server: ReferenceServer, _ path: String) async throws -> (now: Double, requests: [LoggedRequest]) {
        let log = try await server.control("GET", "/_control/log")
        let requests = (log["requests"] as? [[String: Any]] ?? []).filter { $0["key"] as? String == "GET \(path)" }.map {
            LoggedRequest(status: $0["status"] as? Int ?? 0, start: $0["start"] as? Double ?? 0, end: $0["end"] as? Double ?? 0)
        }
        return (log["now"] as? Double ?? 0, requests)
    }

    @Test func anUnchangedFeedCostsOne304AndWritesNothingAndAnEditedItemIsUpdated() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server, [("blog", "/feeds/1.xml")])
        let first = try await feedsync(["pull", "--config", config])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("blog: 10 new"), "\(first.stdout)")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE title LIKE 'Feed 1 item %' AND html LIKE '<p>%' AND url LIKE 'http%'") == "10")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(DISTINCT author_id) FROM posts") == "5", "dc:creator becomes users")

        try await server.control("POST", "/_control/reset-stats")
        let changesBefore = try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts; SELECT cursor FROM feeds")
        let idle = try await feedsync(["pull", "--config", config])
        #expect(idle.stdout.hasPrefix("blog: 0 new, 0 updated, 0 deleted, 0 skipped, 0 videos resolved; 1 page, 1 request"), "\(idle.stdout)")
        #expect(try await requests(server, "/feeds/1.xml") == ["304": 1])
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts; SELECT cursor FROM feeds") == changesBefore)
        #expect(try await sqlite(scratch.database, "SELECT rows_written FROM sync_runs ORDER BY id DESC LIMIT 1") == "0")

        try await server.control("POST", "/_control/edit?feed=1&item=3")
        try await server.control("POST", "/_control/add?feed=1")
        let changed = try await feedsync(["pull", "--config", config])
        #expect(changed.stdout.hasPrefix("blog: 1 new, 1 updated"), "\(changed.stdout)")
        #expect(try await sqlite(scratch.database, "SELECT text FROM posts WHERE id = 'feed-1-item-3'") == "Item 3 of feed 1, version 1.")

        // Items that fall out of the feed's window stay.
        try await server.control("POST", "/_control/window?feed=1&size=3")
        let windowed = try await feedsync(["pull", "--config", config])
        #expect(windowed.stdout.hasPrefix("blog: 0 new, 0 updated, 0 deleted"), "\(windowed.stdout)")
        #expect(try await postCount(scratch.database, feed: "blog") == 11)
    }

    @Test func permanentRedirectsMoveTheFeedAndTemporaryOnesDoNot() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server, [("moved", "/redirect/301/redirect/308/feeds/0.xml"), ("visiting", "/redirect/302/feeds/2.xml"),
                                                       ("elsewhere", "/redirect/307/atom/3.xml")])
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        try await server.control("POST", "/_control/reset-stats")
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        #expect(try await requests(server, "/redirect/301/redirect/308/feeds/0.xml").isEmpty, "the moved feed is polled at its new URL")
        #expect(try await requests(server, "/feeds/0.xml") == ["304": 1])
        #expect(try await requests(server, "/redirect/302/feeds/2.xml") == ["302": 1], "a temporary redirect is followed each time")
        #expect(try await requests(server, "/redirect/307/atom/3.xml") == ["307": 1])
        let status = try await feedsync(["status", "--config", config])
        #expect(status.stdout.contains("moved to:     \(server.baseURL)/feeds/0.xml (the server moved it permanently)"), "\(status.stdout)")
        #expect(!status.stdout.contains("discovered:"), "\(status.stdout)")
        let json = try await feedsync(["status", "--json", "--config", config])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let moved = try #require((report["feeds"] as? [[String: Any]])?.first { $0["feed"] as? String == "moved" })
        #expect(moved["location"] as? String == "\(server.baseURL)/feeds/0.xml" && moved["discoveredFrom"] == nil)
        #expect(try await feedsync(["config", "check", "--config", config]).stdout
                    .contains("  moved: moved to \(server.baseURL)/feeds/0.xml (the server moved it permanently)\n"))
        #expect(try await sqlite(scratch.database, "SELECT name FROM feeds WHERE location IS NOT NULL") == "moved")
        #expect(try await postCount(scratch.database, feed: "elsewhere") == 10, "Atom, its relative links resolved")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE feed = 'elsewhere' AND url LIKE '\(server.baseURL)/site/3/%'") == "10")
    }

    @Test func aSiteAddressIsFollowedToTheFeedItNamesAndRememberedLikeA301() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        // An OPML outline with only an htmlUrl is a site too, discovered the same way.
        let opml = #"<opml version="2.0"><body><outline text="Four" htmlUrl="\#(server.baseURL)/site/4/"/></body></opml>"#
        try Data(opml.utf8).write(to: scratch.folder.appendingPathComponent("sites.opml"))
        let config = try writeConfig(scratch, server, [("site", "/blog/2"), ("nofeed", "/nofeed"),
                                                       ("", #"{"name": "sites", "opml": "sites.opml", "interval": "1h"}"#)])
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.stdout.contains("sites.four <- sites.opml: \"Four\" \(server.baseURL)/site/4/ (a site: its feed is discovered on the page)"),
                "\(check.stdout)")
        #expect(!check.stdout.contains("polled elsewhere"), "nothing is remembered before a pull: \(check.stdout)")
        let first = try await feedsync(["pull", "--config", config])
        #expect(try await postCount(scratch.database, feed: "site") == 10, "\(first.stderr)")
        #expect(try await postCount(scratch.database, feed: "sites.four") == 10, "\(first.stderr)")
        #expect(first.stderr.contains("nofeed: reading the feed at \(server.baseURL)/nofeed: \(server.baseURL)/nofeed is an HTML page that names no feed"),
                "\(first.stderr)")
        // The first feed link (relative, RSS) is used, and polled directly from then on.
        try await server.control("POST", "/_control/reset-stats")
        _ = try await feedsync(["pull", "--config", config])
        #expect(try await requests(server, "/blog/2").isEmpty)
        #expect(try await requests(server, "/feeds/2.xml") == ["304": 1])
        #expect(try await requests(server, "/site/4/").isEmpty)
        #expect(try await requests(server, "/atom/4.xml") == ["304": 1])
        // Shown as found on the page, not as a move of the server's.
        let status = try await feedsync(["status", "--config", config])
        #expect(status.stdout.contains("discovered:   \(server.baseURL)/feeds/2.xml (the feed the page \(server.baseURL)/blog/2 names)"),
                "\(status.stdout)")
        #expect(status.stdout.contains("discovered:   \(server.baseURL)/atom/4.xml (the feed the page \(server.baseURL)/site/4/ names)"),
                "\(status.stdout)")
        #expect(!status.stdout.contains("moved to:"), "\(status.stdout)")
        let json = try await feedsync(["status", "--json", "--config", config])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let site = try #require((report["feeds"] as? [[String: Any]])?.first { $0["feed"] as? String == "site" })
        #expect(site["location"] as? String == "\(server.baseURL)/feeds/2.xml")
        #expect(site["discoveredFrom"] as? String == "\(server.baseURL)/blog/2")
        let again = try await feedsync(["config", "check", "--config", config])
        #expect(again.stdout.contains("polled elsewhere (as the store remembers): 2 feeds\n"
                                      + "  site: discovered \(server.baseURL)/feeds/2.xml on the page \(server.baseURL)/blog/2\n"
                                      + "  sites.four: discovered \(server.baseURL)/atom/4.xml on the page \(server.baseURL)/site/4/\n"),
                "\(again.stdout)")
    }

    @Test func goneStopsPollingUntilTheConfigChangesAndABrokenFeedFailsAlone() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server, [("gone", "/gone"), ("broken", "/static/unreadable.xml"), ("fine", "/feeds/0.xml")])
        let first = try await feedsync(["pull", "--config", config])
        #expect(first.status != 0)
        #expect(first.stderr.contains("broken: reading the feed at \(server.baseURL)/static/unreadable.xml: line 6, column"), "\(first.stderr)")
        #expect(try await postCount(scratch.database, feed: "fine") == 10, "other feeds go on")
        try await server.control("POST", "/_control/reset-stats")
        _ = try await feedsync(["pull", "--config", config])
        #expect(try await requests(server, "/gone").isEmpty, "no request after a 410")
        let status = try await feedsync(["status", "--config", config])
        #expect(status.stdout.contains("stopped:      the server answered 410 Gone"), "\(status.stdout)")

        let moved = try writeConfig(scratch, server, [("gone", "/feeds/4.xml")])
        let again = try await feedsync(["pull", "--config", moved])
        #expect(again.stdout.hasPrefix("gone: 10 new"), "a changed url polls again: \(again.stdout)")
        #expect(try await feedsync(["status", "--config", moved]).stdout.contains("stopped:") == false)
    }

    @Test func anOPMLFileExpandsToOneFeedPerOutlineAndSIGHUPReReadsIt() async throws {
        let server = try startServer(feeds: 30, items: 5)
        let scratch = try Scratch()
        let opml = scratch.folder.appendingPathComponent("subscriptions.opml")
        func writeOPML(_ count: Int) async throws {
            let (data, _) = try await URLSession.shared.data(from: URL(string: "\(server.baseURL)/opml?count=\(count)")!)
            try data.write(to: opml)
        }
        try await writeOPML(25)
        let entry = #"{"name": "subs", "opml": "subscriptions.opml", "interval": "1h", "posts": {"timeoutSeconds": 20}}"#
        let config = try writeConfig(scratch, server, [("", entry)], daemon: #"{"concurrency": 4, "maxRequestsPerHost": 2}"#)
        let check = try await feedsync(["config", "check", "--config", config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("expanded from OPML: 25 feeds"), "\(check.stdout)")
        #expect(check.stdout.contains("subs.feed-7 <- subscriptions.opml: \"Feed 7\" \(server.baseURL)/feeds/7.xml"), "\(check.stdout)")

        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { try await sqlite(scratch.database, "SELECT COUNT(DISTINCT feed) FROM posts") == "25" }, "\(daemon.log)")
        try await writeOPML(28)
        daemon.signal(SIGHUP)
        #expect(try await eventually { try await sqlite(scratch.database, "SELECT COUNT(DISTINCT feed) FROM posts") == "28" }, "\(daemon.log)")
        #expect(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts") == "140")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func aFeedWaitingOutARateLimitHandsBackItsConcurrencySlot() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        // One slot. The limited feed answers 429 with Retry-After: 10, which its sync waits out
        // (up to five times) before it tries again.
        let limited = #"{"name": "limited", "interval": "1h", "posts": {"integration": "webfeed", "url": "\#(server.baseURL)/limited/10"}}"#
        let others = (0..<3).map { n in
            ("", #"{"name": "feed\#(n)", "interval": "0.5s", "posts": {"integration": "webfeed", "url": "\#(server.baseURL)/feeds/\#(n).xml"}}"#)
        }
        let config = try writeConfig(scratch, server, [("", limited)] + others, daemon: #"{"concurrency": 1}"#)
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { try await !requestLog(server, "/limited/10").requests.isEmpty }, "\(daemon.log)")
        let refused = try #require(try await requestLog(server, "/limited/10").requests.first)
        // Let the 10 seconds pass on the server's clock, then read what happened within them.
        #expect(try await eventually { try await requestLog(server, "/").now > refused.start + 9.5 })
        // The one slot went on serving the other feeds meanwhile...
        for n in 0..<3 {
            let polls = try await requestLog(server, "/feeds/\(n).xml").requests.filter { $0.start > refused.end && $0.start < refused.start + 9.5 }
            #expect(polls.count >= 1, "feed\(n) was polled \(polls.count) times during the wait\n\(daemon.log)")
        }
        // ...and the limited feed was not asked again before its Retry-After.
        let early = try await requestLog(server, "/limited/10").requests.filter { $0.start > refused.start && $0.start < refused.start + 9.5 }
        #expect(early.isEmpty, "still waiting out its Retry-After")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime(), "a feed waiting for its slot back still stops")
    }

    @Test func maxAgeIsALowerBoundOnTheDaemonsNextPoll() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        let json = #"{"name": "cached", "interval": "0.5s", "posts": {"integration": "webfeed", "url": "\#(server.baseURL)/cached/3600/feeds/0.xml"}}"#
        let plain = #"{"name": "plain", "interval": "0.5s", "posts": {"integration": "webfeed", "url": "\#(server.baseURL)/feeds/1.xml"}}"#
        let config = try writeConfig(scratch, server, [("", json), ("", plain)])
        let daemon = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { (try await requests(server, "/feeds/1.xml")["304"] ?? 0) >= 3 }, "\(daemon.log)")
        #expect(try await requests(server, "/cached/3600/feeds/0.xml") == ["200": 1], "max-age=3600 holds the next poll back")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }

    @Test func pullSyncsFeedsAtOnceAndPrintsThemInConfigOrder() async throws {
        let server = try startServer()
        let scratch = try Scratch()
        // The first feeds are the slowest, so they finish last; a broken one sits in the middle.
        let feeds = [("a", "/slow/2000/feeds/0.xml"), ("b", "/slow/1500/feeds/1.xml"), ("broken", "/static/unreadable.xml"),
                     ("c", "/slow/1000/feeds/2.xml"), ("d", "/slow/500/atom/3.xml"), ("gone", "/gone"), ("e", "/feeds/4.xml")]
        let config = try writeConfig(scratch, server, feeds, daemon: #"{"concurrency": 7, "maxRequestsPerHost": 7}"#)
        let first = try await feedsync(["pull", "--config", config])
        #expect(first.status == 69, "the first failing feed's status, as before: \(first.stderr)")
        #expect(first.stdout.split(separator: "\n").map { String($0.prefix(while: { $0 != ":" })) } == ["a", "b", "c", "d", "gone", "e"],
                "\(first.stdout)")
        #expect(first.stderr.split(separator: "\n").count == 1 && first.stderr.hasPrefix("feedsync: broken: reading the feed at"), "\(first.stderr)")
        #expect(try await postCount(scratch.database, feed: "a") == 10)
        #expect(try await postCount(scratch.database, feed: "d") == 10, "Atom, synced beside the others")

        try await server.control("POST", "/_control/reset-stats")
        let json = try await feedsync(["pull", "--config", config, "--json"])
        // The slowest feeds' requests were in flight at the same time, by the server's log.
        let slowest = try await requestLog(server, "/slow/2000/feeds/0.xml").requests.first
        let next = try await requestLog(server, "/slow/1500/feeds/1.xml").requests.first
        #expect(slowest != nil && next != nil && slowest!.start < next!.end && next!.start < slowest!.end,
                "the two slowest feeds were fetched at once: \(String(describing: slowest)), \(String(describing: next))")
        let outcomes = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(outcomes.map { $0["feed"] as? String } == ["a", "b", "broken", "c", "d", "gone", "e"])
        #expect(outcomes.map { $0["exitStatus"] as? Int } == [0, 0, 69, 0, 0, 0, 0] && json.status == 69)

        let one = try writeConfig(scratch, server, feeds, daemon: #"{"concurrency": 1, "maxRequestsPerHost": 7}"#)
        try await server.control("POST", "/_control/reset-stats")
        let serial = try await feedsync(["pull", "--config", one])
        // With one slot, one after another (in whichever order they got the slot): the same check
        // tells the two apart.
        let inTurnA = try await requestLog(server, "/slow/2000/feeds/0.xml").requests.first
        let inTurnB = try await requestLog(server, "/slow/1500/feeds/1.xml").requests.first
        #expect(inTurnA != nil && inTurnB != nil && !(inTurnA!.start < inTurnB!.end && inTurnB!.start < inTurnA!.end),
                "one at a time with concurrency 1: \(String(describing: inTurnA)), \(String(describing: inTurnB))")
        #expect(serial.stdout.split(separator: "\n").map { String($0.prefix(while: { $0 != ":" })) } == ["a", "b", "c", "d", "gone", "e"])
        #expect(serial.status == 69 && serial.stderr == first.stderr)
    }
}
