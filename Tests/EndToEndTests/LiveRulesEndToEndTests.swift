import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Rules on posts a live stream pushes (Mastodon's streaming API): a blocked post is not stored
/// and is counted in `/metrics`, as a polled one is.
@Suite(.endToEnd, .serialized) struct LiveRulesEndToEndTests {
    let token = "tok-live"

    func storedIDs(_ scratch: Scratch) async throws -> [String] {
        let rows = try await sqlite(scratch.database, "SELECT id FROM posts WHERE feed = 'social'")
        return rows.isEmpty ? [] : rows.split(separator: "\n").map(String.init)
    }

    func filtered(_ port: Int) async throws -> String? {
        let text = try await MetricsEndToEndTests.get("http://127.0.0.1:\(port)/metrics").stdout
        return text.split(separator: "\n").first { $0.hasPrefix(#"feedsync_posts_filtered_total{feed="social"} "#) }
            .map { String($0.split(separator: " ").last ?? "") }
    }

    @Test func aBlockedPostPushedLiveIsNotStoredAndIsCounted() async throws {
        let server = try ReferenceServer(script: "Fixtures/mastodon/server.py",
                                         arguments: ["--statuses", "20", "--token", token, "--thump", "1"])
        let scratch = try Scratch()
        let port = try MetricsEndToEndTests.freePort()
        let config = try scratch.writeMastodonConfig(server: server.baseURL, postsKeys: #", "stream": true"#)
        var json = try String(contentsOfFile: config, encoding: .utf8)
        json = String(json.dropLast()) + #", "rules": [{"block": {"text": "zyxblocked"}}], "metrics": {"listen": "127.0.0.1:\#(port)"}}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: config))
        let daemon = try DaemonProcess(config: config, in: scratch, environment: ["MASTODON_TOKEN": token])
        defer { daemon.signal(SIGKILL) }
        #expect(try await eventually { daemon.log.contains("event=live_caught_up") }, "\(daemon.log)")
        let before = try await storedIDs(scratch)
        #expect(!before.isEmpty)
        try await server.control("POST", "/_control/reset-stats")

        let blocked = try await server.control("POST", "/_control/post?count=1&text=a%20zyxblocked%20post")
        #expect(blocked["streamed"] as? Int == 1, "one open stream received it")
        let blockedID = try #require((blocked["ids"] as? [String])?.first)
        #expect(try await eventually { try await filtered(port) == "1" }, "\(daemon.log)")

        // A post the rule lets through, pushed after it, is stored: the stream did deliver.
        let kept = try await server.control("POST", "/_control/post?count=1&text=an%20ordinary%20post")
        let keptID = try #require((kept["ids"] as? [String])?.first)
        #expect(try await eventually { try await storedIDs(scratch).contains(keptID) }, "\(daemon.log)")
        let after = try await storedIDs(scratch)
        #expect(!after.contains(blockedID) && Set(after) == Set(before + [keptID]), "the blocked post is not stored")
        #expect(try await filtered(port) == "1")
        let stats = try await server.stats().byPath
        #expect(stats["GET /api/v1/timelines/home"] == nil, "no poll of the timeline delivered these: \(stats)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }
}
