import Foundation
import Testing

/// A custom API (`httpapi`) feed's login token goes with the archive's fetches to the API's own
/// origin only (issue 37: "it sends no token to a host that is not the feed's own server"). The
/// reference server with `--avatars-here` serves the authors' avatars itself: odd authors' at
/// `/v1/avatars/uNNN.png`, behind the bearer token as the feed is; even authors' at
/// `/v1/avatars/away-uNNN.png`, a redirect to `localhost` on the same port (another origin: another
/// host name) that needs no token. It records each avatar request's `Host` and whether it carried
/// an `Authorization`.
@Suite struct MediaHTTPAPIEndToEndTests {
    /// A config of one httpapi feed whose authors' avatars are archived.
    func writeConfig(_ scratch: Scratch, _ server: ReferenceServer) throws -> String {
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data("""
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "api", "posts": {"integration": "httpapi", "baseURL": "\(server.baseURL)", "username": "demo",
                                                  "passwordEnv": "FEEDSYNC_PASSWORD"}}],
             "media": {"path": "media", "kinds": ["avatar"]}}
            """.utf8).write(to: config)
        return config.path
    }

    /// Each avatar request as `HOST PATH` and whether it carried an `Authorization`.
    func avatarRequests(_ server: ReferenceServer) async throws -> [(request: String, authorized: Bool)] {
        let requests = try await server.control("GET", "/_control/avatars")["requests"] as? [[String: Any]] ?? []
        return requests.map { ("\($0["host"] ?? "") \($0["path"] ?? "")", $0["authorization"] as? Bool ?? false) }
    }

    @Test func theLoginsTokenGoesToTheAPIsOriginOnlyAndNotAfterARedirectAway() async throws {
        let server = try ReferenceServer(posts: 30, extra: ["--avatars-here"])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server)
        let pull = try await feedsync(["pull", "--config", config])
        #expect(pull.status == 0, "\(pull.stderr)")
        let fetch = try await feedsync(["media", "fetch", "--config", config])
        #expect(fetch.status == 0 && fetch.stdout.contains(" 0 failed"), "\(fetch.stdout) \(fetch.stderr)")

        let home = "127.0.0.1:\(server.port)", other = "localhost:\(server.port)"
        let rows = try await sqlite(scratch.database, "SELECT url || '|' || status FROM media ORDER BY url").split(separator: "\n")
        let here = rows.filter { $0.contains("/v1/avatars/u") }, away = rows.filter { $0.contains("/v1/avatars/away-u") }
        #expect(!here.isEmpty && !away.isEmpty && here.count + away.count == rows.count, "\(rows)")
        #expect(rows.allSatisfy { $0.hasSuffix("|fetched") }, "\(rows)")

        let requests = try await avatarRequests(server)
        // Every avatar on the API's origin went with the token: the files behind it and the redirects' first hops.
        let authorized = Set(requests.filter(\.authorized).map(\.request))
        #expect(authorized == Set(rows.map { "\(home) " + String($0.split(separator: "|")[0].dropFirst("http://\(home)".count)) }),
                "\(requests)")
        // The redirects' second hops went to localhost, another origin, without it.
        let elsewhere = requests.filter { $0.request.hasPrefix(other) }
        #expect(elsewhere.count == away.count && elsewhere.allSatisfy { !$0.authorized }, "\(requests)")

        let token = try await sqlite(scratch.sessions, "SELECT access_token FROM sessions")
        #expect(token.count > 20 && !fetch.stdout.contains(token) && !fetch.stderr.contains(token), "no token printed")
    }

    @Test func withoutAUsableSessionTheMediaGoesWithoutTheTokenAndOneLineSaysWhy() async throws {
        let server = try ReferenceServer(posts: 10, extra: ["--avatars-here"])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, server)
        #expect(try await feedsync(["pull", "--config", config]).status == 0)
        // The stored session has expired: the archive sends nothing rather than a stale token, and logs in never.
        _ = try await sqlite(scratch.sessions, "UPDATE sessions SET expires_at = 1000")
        let expired = try await feedsync(["media", "fetch", "--config", config])
        #expect(expired.status == 0, "\(expired.stderr)")
        let lines = expired.stderr.split(separator: "\n").filter { $0.contains("media fetched without the feed's credentials") }
        #expect(lines.count == 1 && lines[0].contains("has expired") && lines[0].contains("demo"), "\(expired.stderr)")
        // No session at all: one line too.
        _ = try await sqlite(scratch.sessions, "DELETE FROM sessions")
        let none = try await feedsync(["media", "fetch", "--config", config])
        #expect(none.stderr.split(separator: "\n").filter { $0.contains("no session is stored") }.count == 1, "\(none.stderr)")

        let requests = try await avatarRequests(server)
        #expect(!requests.isEmpty && requests.allSatisfy { !$0.authorized }, "\(requests)")
        #expect(try await server.stats().byPath["POST /v1/auth/login"]?["200"] == 1, "the archive never logs in")
        let statuses = try await sqlite(scratch.database, "SELECT DISTINCT status FROM media")
        #expect(statuses == "failed", "the API's avatars need the token: \(statuses)")
    }
}
