import Foundation
import Testing

/// Webhooks: feedsyncd POSTs what it stored to a receiver (Fixtures/webhooks/receiver.py) that
/// checks each delivery's signature, through an endpoint that is down and a daemon restart.
@Suite(.endToEnd) struct WebhookEndToEndTests {
    static let secret = "hook-secret-4Fq9Lx2Vb7"

    func writeConfig(_ scratch: Scratch, feedServer: ReferenceServer, receiverURL: String, extra: String = "") throws -> String {
        let secretFile = scratch.folder.appendingPathComponent("hook-secret")
        try Data(Self.secret.utf8).write(to: secretFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile.path)
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "#
            + #""feeds": [{"name": "blog", "interval": "1s", "posts": {"integration": "webfeed", "url": "\#(feedServer.baseURL)/feeds/1.xml"}}], "#
            + #""webhooks": [{"url": "\#(receiverURL)", "secretFile": "hook-secret"\#(extra)}]}"#
        let url = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    func received(_ receiver: ReferenceServer) async throws -> [[String: Any]] {
        try await receiver.control("GET", "/_control/received")["deliveries"] as? [[String: Any]] ?? []
    }

    /// The first daemon stops cleanly (SIGTERM) or is killed (SIGKILL): its queued deliveries are
    /// in the store either way, committed with their page.
    @Test(arguments: [SIGTERM, SIGKILL])
    func deliveriesSurviveADownEndpointAndARestartAndAreSignedAndDeliveredOnce(_ stop: Int32) async throws {
        let feeds = try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "2", "--items", "3"])
        let receiver = try ReferenceServer(script: "Fixtures/webhooks/receiver.py", arguments: ["--secret", Self.secret])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, feedServer: feeds, receiverURL: receiver.baseURL + "/hook")
        try await receiver.control("POST", "/_control/down")

        let first = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { first.log.contains("event=webhook_failed") }, "\(first.log)")
        first.signal(stop)
        #expect(stop == SIGKILL ? await first.exits() : await first.stopsInTime(), "\(first.log)")
        let held = try await sqlite(scratch.database, "SELECT COUNT(*) || ' ' || group_concat(attempts) FROM webhook_deliveries")
        #expect(held.hasPrefix("1 "), "queued in the store: \(held)\n\(first.log)")
        #expect(try await received(receiver).isEmpty)

        // Restarted while the endpoint is still down: it keeps failing, then it comes back.
        let second = try DaemonProcess(config: config, in: scratch)
        #expect(try await eventually { second.log.contains("event=webhook_failed") }, "\(second.log)")
        try await receiver.control("POST", "/_control/up")
        #expect(try await eventually { try await received(receiver).count == 1 })
        try await feeds.control("POST", "/_control/add?feed=1")
        try await feeds.control("POST", "/_control/edit?feed=1&item=0")
        #expect(try await eventually { try await received(receiver).count >= 3 })
        #expect(try await eventually { try await sqlite(scratch.database, "SELECT COUNT(*) FROM webhook_deliveries") == "0" })
        second.signal(SIGTERM)
        #expect(await second.stopsInTime(), "\(second.log)")

        let deliveries = try await received(receiver)
        #expect(deliveries.allSatisfy { $0["valid"] as? Bool == true }, "every signature checks: \(deliveries)")
        #expect(deliveries.allSatisfy { ($0["id"] as? String) == ($0["header_id"] as? String) && $0["feed"] as? String == "blog" })
        #expect(Set(deliveries.compactMap { $0["id"] as? String }).count == deliveries.count, "each delivery once")
        let new = deliveries.filter { $0["event"] as? String == "new" }.flatMap { $0["posts"] as? [String] ?? [] }
        #expect(new.sorted() == ["feed-1-item-0", "feed-1-item-1", "feed-1-item-2", "feed-1-item-3"], "\(deliveries)")
        let updated = deliveries.filter { $0["event"] as? String == "updated" }.flatMap { $0["posts"] as? [String] ?? [] }
        #expect(updated == ["feed-1-item-0"], "\(deliveries)")
        #expect(!first.log.contains(Self.secret) && !second.log.contains(Self.secret))
    }

    /// Without webhooks the daemon's webhook service waits for a reload rather than a timer; the
    /// reload that brings one sends what is stored from then on.
    @Test func aWebhookAddedOnSIGHUPIsSentWithoutARestart() async throws {
        let feeds = try ReferenceServer(script: "Fixtures/webfeed/server.py", arguments: ["--feeds", "2", "--items", "3"])
        let receiver = try ReferenceServer(script: "Fixtures/webhooks/receiver.py", arguments: ["--secret", Self.secret])
        let scratch = try Scratch()
        let config = try writeConfig(scratch, feedServer: feeds, receiverURL: receiver.baseURL + "/hook")
        let withWebhook = try Data(contentsOf: URL(fileURLWithPath: config))
        let withoutWebhook = try JSONSerialization.jsonObject(with: withWebhook) as? [String: Any] ?? [:]
        try JSONSerialization.data(withJSONObject: withoutWebhook.filter { $0.key != "webhooks" }).write(to: URL(fileURLWithPath: config))
        let daemon = try DaemonProcess(config: config, in: scratch, arguments: ["--log-level", "debug"])
        #expect(try await eventually { try await sqlite(scratch.database, "SELECT COUNT(*) FROM posts") == "3" }, "\(daemon.log)")

        try withWebhook.write(to: URL(fileURLWithPath: config))
        daemon.signal(SIGHUP)
        // A sync begun before the reload may still run under the old config, so the new item is
        // published once one has begun after it (a feed's syncs never overlap).
        #expect(try await eventually {
            daemon.log.components(separatedBy: "event=reloaded").dropFirst().last?.contains("event=sync_start feed=blog") == true
        }, "\(daemon.log)")
        try await feeds.control("POST", "/_control/add?feed=1")
        #expect(try await eventually { try await received(receiver).count == 1 }, "\(daemon.log)")
        let delivery = try await received(receiver).first ?? [:]
        #expect(delivery["valid"] as? Bool == true && delivery["event"] as? String == "new", "\(delivery)")
        #expect(delivery["posts"] as? [String] == ["feed-1-item-3"], "\(delivery)")
        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime(), "\(daemon.log)")
    }

    @Test(arguments: [
        (#""ftp://hooks.example/x""#, "webhooks[0].url", "is not an http(s) URL"),
        (#""http://127.0.0.1:PORT/metrics""#, "webhooks[0].url", "points at feedsyncd's own listener"),
        (#""http://localhost:PORT/hook""#, "webhooks[0].url", "points at feedsyncd's own listener"),
    ])
    func aWebhookURLThatIsNotHTTPOrIsTheDaemonsOwnListenerIsRefused(_ url: String, _ path: String, _ reason: String) async throws {
        let scratch = try Scratch()
        let port = 19_999   // never bound: config check only reads the address
        let json = #"{"store": {"integration": "sqlite", "path": "feedsync.sqlite"}, "feeds": [], "metrics": {"listen": "127.0.0.1:\#(port)"}, "#
            + #""webhooks": [{"url": \#(url.replacingOccurrences(of: "PORT", with: String(port))), "secretEnv": "HOOK_SECRET"}]}"#
        let config = scratch.folder.appendingPathComponent("feedsync.json")
        try Data(json.utf8).write(to: config)
        let check = try await feedsync(["config", "check", "--config", config.path], environment: ["HOOK_SECRET": Self.secret])
        #expect(check.status == 78, "\(check.stdout)\(check.stderr)")
        #expect(check.stderr.contains("\(path):") && check.stderr.contains(reason), "\(check.stderr)")
    }
}
