import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Feeds served back by a real `feedsyncd`: Atom that RFC 4287's RELAX NG schema accepts (jing),
/// JSON Feed 1.1, RFC 5005 `next` paging through every post, 304 for a known ETag or date, and
/// the refusals.
@Suite(.endToEnd, .serialized) struct ServedFeedEndToEndTests {
    static func jing(_ document: String, _ scratch: Scratch) async throws -> (ok: Bool, output: String) {
        let file = scratch.folder.appendingPathComponent("served-\(UUID().uuidString).atom")
        try Data(document.utf8).write(to: file)
        let schema = repository.appendingPathComponent("Fixtures/atom/atom.rnc").path
        let result = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["jing", "-c", schema, file.path])
        return (result.status == 0, result.stdout + result.stderr)
    }

    /// The `<id>`s of the entries and the `next` link of an Atom page.
    static func entries(_ atom: String) -> (ids: [String], next: String?) {
        let ids = atom.components(separatedBy: "<entry><id>").dropFirst().compactMap { $0.components(separatedBy: "</id>").first }
        let next = atom.range(of: #"<link rel="next" href=""#).flatMap { start in
            atom[start.upperBound...].components(separatedBy: "\"").first.map { $0.replacingOccurrences(of: "&amp;", with: "&") }
        }
        return (ids, next)
    }

    @Test func aFeedIsServedAsValidAtomAndJSONFeedPagedAndCached() async throws {
        let server = try ReferenceServer(posts: 25)
        let scratch = try Scratch()
        let (daemon, base) = try await ReaderListenerEndToEndTests.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }
        let user = ["-u", "ada:correct horse battery"]

        var ids: [String] = []
        var path: String? = "/feeds/home.atom?n=10"
        var pages = 0
        while let next = path, pages < 10 {
            let page = try await ReaderListenerEndToEndTests.curl(user + [base + next])
            #expect(page.status == 200, "\(page.body.prefix(300))")
            let valid = try await Self.jing(page.body, scratch)
            #expect(valid.ok, "RFC 4287's schema refuses the served Atom: \(valid.output.prefix(2000))")
            let (found, following) = Self.entries(page.body)
            ids += found
            path = following
            pages += 1
        }
        #expect(pages == 3 && ids.count == 25 && Set(ids).count == 25, "\(pages) pages, \(ids.count) entries")
        #expect(ids.allSatisfy { $0.hasPrefix("tag:google.com,2005:reader/item/") })

        let json = try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/home.json?n=10"])
        let feed = try #require(try JSONSerialization.jsonObject(with: Data(json.body.utf8)) as? [String: Any])
        #expect(feed["version"] as? String == "https://jsonfeed.org/version/1.1")
        let items = feed["items"] as? [[String: Any]] ?? []
        #expect(items.compactMap { $0["id"] as? String } == Array(ids.prefix(10)), "the same posts, the same order")
        #expect((feed["next_url"] as? String)?.hasPrefix("/feeds/home.json?c=c1") == true)

        // Caching: the ETag and the date each give 304; a new post changes the ETag.
        let head = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-s", "-D", "-", "-o", "/dev/null"] + user + [base + "/feeds/home.atom"])
        let etag = head.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) } ?? ""
        let modified = head.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("last-modified:") }
            .map { String($0.dropFirst(14)).trimmingCharacters(in: .whitespaces) } ?? ""
        #expect(!etag.isEmpty && modified.hasSuffix(" GMT"), "\(head.stdout)")
        #expect(try await ReaderListenerEndToEndTests.curl(user + ["-H", "If-None-Match: \(etag)", base + "/feeds/home.atom"]).status == 304)
        #expect(try await ReaderListenerEndToEndTests.curl(user + ["-H", "If-Modified-Since: \(modified)", base + "/feeds/home.atom"]).status == 304)
        #expect(try await ReaderListenerEndToEndTests.curl(user + ["-H", "If-None-Match: \"other\"", base + "/feeds/home.atom"]).status == 200)
        let all = try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/all.atom?n=5"])
        #expect(all.status == 200 && Self.entries(all.body).ids == Array(ids.prefix(5)))
        #expect(try await Self.jing(all.body, scratch).ok)
        let group = try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/group/Friends.json?n=5"])
        let grouped = (try JSONSerialization.jsonObject(with: Data(group.body.utf8)) as? [String: Any])?["items"] as? [[String: Any]]
        #expect(grouped?.compactMap { $0["id"] as? String } == Array(ids.prefix(5)), "\(group.body.prefix(300))")
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/group/Nobody.atom"]).status == 404)

        // A saved search: its matches, newest first, the same count the store's own search finds.
        let search = try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/search/bread.atom"])
        let searchValid = try await Self.jing(search.body, scratch)
        #expect(search.status == 200 && searchValid.ok, "\(search.body.prefix(300)) \(searchValid.output.prefix(500))")
        let matching = Int(try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts WHERE text LIKE '%bread%' OR text LIKE '%sourdough%'")) ?? -1
        let found = Self.entries(search.body).ids
        #expect(matching > 0 && found.count == matching, "\(found.count) of \(matching)")
        #expect(found == ids.filter(found.contains), "newest first")
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/search/none.atom"]).status == 404)
    }

    /// The `ETag` is the store's change counter of the feeds a document shows: read marks and
    /// stars (not in a served feed) leave it; an edit, a deletion, an author renamed move it,
    /// whatever writes them (here the sqlite3 shell, no code of ours).
    @Test func theETagMovesWithEveryChangeToWhatTheFeedShowsAndOnlyThen() async throws {
        let server = try ReferenceServer(posts: 5)
        let scratch = try Scratch()
        let (daemon, base) = try await ReaderListenerEndToEndTests.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }
        let user = ["-u", "ada:correct horse battery"]
        func etag(_ path: String) async throws -> String {
            let head = try await run(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-s", "-D", "-", "-o", "/dev/null"] + user + [base + path])
            return head.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }
                .map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) } ?? ""
        }
        var tags = [try await etag("/feeds/home.atom"), try await etag("/feeds/all.json")]
        #expect(tags.allSatisfy { !$0.isEmpty } && tags[0] != tags[1])
        #expect(try await ReaderListenerEndToEndTests.curl(user + ["-H", "If-None-Match: \(tags[0])", base + "/feeds/home.atom"]).status == 304)

        _ = try await sqlite(scratch.database, "INSERT OR REPLACE INTO post_state (feed, post_id, read_at, starred_at) SELECT feed, id, 1, 1 FROM posts")
        #expect(try await etag("/feeds/home.atom") == tags[0], "marks are not in a served feed")
        let changes = [
            "UPDATE posts SET text = 'edited' WHERE pk = (SELECT max(pk) FROM posts)",
            "DELETE FROM posts WHERE pk = (SELECT min(pk) FROM posts)",
            "UPDATE users SET display_name = 'Renamed'",
        ]
        for change in changes {
            _ = try await sqlite(scratch.database, change)
            let now = [try await etag("/feeds/home.atom"), try await etag("/feeds/all.json")]
            #expect(now[0] != tags[0] && now[1] != tags[1], "\(change)")
            #expect(try await ReaderListenerEndToEndTests.curl(user + ["-H", "If-None-Match: \(tags[0])", base + "/feeds/home.atom"]).status == 200)
            #expect(try await ReaderListenerEndToEndTests.curl(user + ["-H", "If-None-Match: \(now[0])", base + "/feeds/home.atom"]).status == 304)
            tags = now
        }
    }

    /// A reader that cannot send a password follows a feed token in the URL: its feed only, every
    /// page (the `next` link carries it), until it is revoked; HTTP Basic still works beside it.
    @Test func aFeedTokenInTheURLOpensItsFeedOnlyUntilRevoked() async throws {
        let server = try ReferenceServer(posts: 12)
        let scratch = try Scratch()
        let (daemon, base) = try await ReaderListenerEndToEndTests.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }
        let config = scratch.folder.appendingPathComponent("feedsync.json").path
        let made = try await feedsync(["serve-user", "token", "ada", "home", "--config", config])
        let path = try #require(made.stdout.split(separator: "\n").first.map(String.init), "\(made.stderr)")
        let token = String(path.split(separator: "=").last ?? "")

        var ids: [String] = []
        var next: String? = path + "&n=5"
        while let page = next, ids.count < 20 {
            let answer = try await ReaderListenerEndToEndTests.curl([base + page])
            #expect(answer.status == 200, "\(page): \(answer.body.prefix(200))")
            let (found, following) = Self.entries(answer.body)
            ids += found
            next = following
            #expect(following.map { $0.contains("token=\(token)") } ?? true, "the next link keeps the token")
        }
        #expect(ids.count == 12 && Set(ids).count == 12)
        let json = try await ReaderListenerEndToEndTests.curl([base + "/feeds/home.json?token=\(token)"])
        #expect(json.status == 200 && json.body.contains("jsonfeed.org/version/1.1"))
        #expect(try await ReaderListenerEndToEndTests.curl([base + "/feeds/all.atom?token=\(token)"]).status == 401, "another feed")
        #expect(try await ReaderListenerEndToEndTests.curl(["-H", "Authorization: GoogleLogin auth=\(token)",
                                                            base + "/reader/api/0/user-info"]).status == 401, "never the API")
        let wrong = String(token.dropLast()) + (token.hasSuffix("0") ? "1" : "0")
        #expect(try await ReaderListenerEndToEndTests.curl([base + "/feeds/home.atom?token=\(wrong)"]).status == 401)
        #expect(try await ReaderListenerEndToEndTests.curl([base + "/feeds/home.atom?token=%0a"]).status == 401)
        #expect(try await ReaderListenerEndToEndTests.curl(["-u", "ada:correct horse battery", base + "/feeds/home.atom"]).status == 200)
        #expect(!daemon.log.contains(token), "the token is never logged")
        #expect(try await feedsync(["serve-user", "revoke", "ada", "home", "--config", config]).status == 0)
        #expect(try await ReaderListenerEndToEndTests.curl([base + path]).status == 401, "revoked")
    }

    /// A reload (SIGHUP) changes what is served at once: a feed's group and the saved searches.
    @Test func aReloadChangesTheServedGroupsAndSearches() async throws {
        let server = try ReferenceServer(posts: 3)
        let scratch = try Scratch()
        let (daemon, base) = try await ReaderListenerEndToEndTests.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }
        let user = ["-u", "ada:correct horse battery"]
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/group/Friends.atom"]).status == 200)
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/search/toast.json"]).status == 404)

        let config = scratch.folder.appendingPathComponent("feedsync.json")
        let json = try String(contentsOf: config, encoding: .utf8)
            .replacingOccurrences(of: #""group": "Friends""#, with: #""group": "Family""#)
            .replacingOccurrences(of: #""searches": {"bread": "bread OR sourdough"}"#, with: #""searches": {"toast": "bread"}"#)
        try Data(json.utf8).write(to: config)
        daemon.signal(SIGHUP)
        #expect(try await eventually { daemon.log.contains("reloaded") }, "\(daemon.log)")
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/group/Family.atom"]).status == 200)
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/group/Friends.atom"]).status == 404)
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/search/toast.json"]).status == 200)
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/search/bread.json"]).status == 404)
    }

    @Test func aFeedRefusesWhoIsNotAReaderAndWhatIsNotServed() async throws {
        let server = try ReferenceServer(posts: 2)
        let scratch = try Scratch()
        let (daemon, base) = try await ReaderListenerEndToEndTests.start(scratch, server: server)
        defer { daemon.signal(SIGKILL) }
        let user = ["-u", "ada:correct horse battery"]
        #expect(try await ReaderListenerEndToEndTests.curl([base + "/feeds/home.atom"]).status == 401)
        #expect(try await ReaderListenerEndToEndTests.curl(["-u", "ada:wrong password", base + "/feeds/home.atom"]).status == 401)
        #expect(try await ReaderListenerEndToEndTests.curl(["-H", "Authorization: Basic !!!", base + "/feeds/home.atom"]).status == 401)
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/nowhere.atom"]).status == 404)
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/home.rss"]).status == 404)
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/home.atom?c=c1zz"]).status == 400)
        #expect(try await ReaderListenerEndToEndTests.curl(user + [base + "/feeds/home.atom?n=1001"]).status == 400)
        #expect(try await ReaderListenerEndToEndTests.curl(user + ["-d", "x=1", base + "/feeds/home.atom"]).status == 405)
    }
}
