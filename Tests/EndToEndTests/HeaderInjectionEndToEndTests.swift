import Foundation
import Testing

/// A hostile Bluesky service hands out tokens with CR LF in them: the real binary refuses them
/// at login and at refresh, before the session is saved, and no request carries a split header.
@Suite(.endToEnd) struct HeaderInjectionEndToEndTests {
    static let password = "app-pass-SECRET-1"
    static let injection = #"{"access": "\r\nX-Injected: 1"}"#

    func start() throws -> (ReferenceServer, Scratch, String) {
        let server = try ReferenceServer(script: "Fixtures/bluesky/server.py", arguments: ["--posts", "30", "--password", Self.password])
        let scratch = try Scratch()
        let json = """
            {"store": {"integration": "sqlite", "path": "feedsync.sqlite"},
             "feeds": [{"name": "sky", "posts": {"integration": "bluesky", "service": "\(server.baseURL)",
              "identifier": "me.test", "appPasswordEnv": "BLUESKY_APP_PASSWORD", "timeline": "home"}}]}
            """
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return (server, scratch, url.path)
    }

    func pull(_ config: String) async throws -> Finished {
        try await feedsync(["pull", "--config", config], environment: ["BLUESKY_APP_PASSWORD": Self.password])
    }

    func timelineRequests(_ server: ReferenceServer) async throws -> (timeline: Int, injected: Int) {
        let stats = try await server.control("GET", "/_control/stats")
        let requests = stats["requests"] as? [String: [String: Int]] ?? [:]
        return (requests["GET app.bsky.feed.getTimeline"]?.values.reduce(0, +) ?? 0, stats["injected_headers"] as? Int ?? -1)
    }

    @Test func anAccessTokenWithCRLFIsRefusedAtLoginAndNeverStoredOrSent() async throws {
        let (server, scratch, config) = try start()
        _ = try await server.control("POST", "/_control/token-suffix", body: Self.injection)

        let result = try await pull(config)

        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("the accessJwt holds byte 0xD at position"), "\(result.stderr)")
        #expect(result.stderr.contains("it is neither sent nor stored"))
        #expect(!result.stderr.contains("X-Injected"), "the token is not printed")
        let seen = try await timelineRequests(server)
        #expect(seen.timeline == 0 && seen.injected == 0)
        let saved = (try? await storedTokens(scratch)) ?? []
        #expect(saved.isEmpty, "no session was saved")
    }

    @Test func aRefreshThatHandsOutACRLFTokenKeepsTheOldSession() async throws {
        let (server, scratch, config) = try start()
        #expect(try await pull(config).status == 0)
        let before = try await storedTokens(scratch)
        #expect(before.count == 2)

        _ = try await server.control("POST", "/_control/token-suffix", body: Self.injection)
        _ = try await server.control("POST", "/_control/expire-tokens")
        let result = try await pull(config)

        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("the accessJwt holds byte 0xD"), "\(result.stderr)")
        #expect(try await timelineRequests(server).injected == 0)
        let after = try await storedTokens(scratch)
        #expect(after.allSatisfy { !$0.contains("\r") && !$0.contains("\n") })
    }
}
