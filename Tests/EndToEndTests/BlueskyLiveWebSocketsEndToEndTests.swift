import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A python3 that imports `websockets` (Debian's python3-websockets): `python3` on the PATH, else
/// Debian's own `/usr/bin/python3`, since a pyenv or venv `python3` first on the PATH does not
/// see Debian's packages. `nil`, after one printed line, where none does.
enum WebSocketsLibrary {
    static let python = Task { () -> String? in
        for candidate in ["python3", "/usr/bin/python3"] {
            if let check = try? await run(URL(fileURLWithPath: "/usr/bin/env"), [candidate, "-c", "import websockets"]), check.status == 0 {
                return candidate
            }
        }
        print("skipping the tests against the websockets library: no python3 here imports websockets (apt-get install python3-websockets)")
        return nil
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only where python3 imports the `websockets` library; elsewhere it shows as skipped.
    static var needsWebSocketsLibrary: Self {
        .enabled("needs python3-websockets (see the printed reason)") { await WebSocketsLibrary.python.value != nil }
    }
}

/// `feedsyncd`'s live Bluesky mirror against `Fixtures/bluesky/jetstream_websockets.py`: a Jetstream
/// whose WebSocket side (handshake, framing, pings every 0.5 s, close handshake) is the
/// `websockets` library's, so our RFC 6455 client meets framing no one here wrote. The feed
/// polls once an hour: what reaches the store within seconds came through the stream.
@Suite(.endToEnd, .serialized, .needsWebSocketsLibrary) struct BlueskyLiveWebSocketsEndToEndTests {
    /// The jetstream.py suite's daemon, store reader and authors.
    let live = BlueskyLiveEndToEndTests()
    let ada = BlueskyLiveEndToEndTests.ada

    func storedIDs(_ scratch: Scratch) async throws -> Set<String> { try await live.storedIDs(scratch) }

    func stats(_ server: ReferenceServer) async throws -> [String: Any] {
        try await server.control("GET", "/_jetstream/stats")
    }

    func count(_ text: String, in log: String) -> Int { log.components(separatedBy: text).count - 1 }

    @Test func postsAndDeletesReachTheStoreAndADroppedConnectionsGapIsFilled() async throws {
        let python = try #require(await WebSocketsLibrary.python.value)
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream_websockets.py",
                                         arguments: ["--posts", "30", "--ping-interval", "0.5", "--ping-timeout", "5"], python: python)
        let websocket = try #require(try await server.control("GET", "/_jetstream/websocket")["url"] as? String)
        let scratch = try Scratch()
        let daemon = try live.startDaemon(scratch, server, jetstreamURL: websocket)
        #expect(try await eventually { count("event=live_caught_up", in: daemon.log) >= 1 }, "\(daemon.log)")

        // (d) The subscribe request the library received: the follows and the account in wantedDids, and no token.
        let subscriptions = try await server.control("GET", "/_jetstream/subscriptions")["subscriptions"] as? [[String: Any]] ?? []
        let request = try #require(subscriptions.last(where: { $0["path"] != nil }))
        let query = URLComponents(string: "http://x\(try #require(request["path"] as? String))")?.queryItems ?? []
        let dids = Set(query.filter { $0.name == "wantedDids" }.compactMap(\.value))
        #expect(dids.count == 9 && dids.contains(ada) && dids.contains(BlueskyLiveEndToEndTests.owner), "\(dids)")
        let headers = (request["headers"] as? [String: String] ?? [:]).keys.map { $0.lowercased() }
        #expect(!headers.contains("authorization") && !headers.contains("cookie"), "\(headers)")

        // (a) A post reaches the store within 2 s; (b) its delete removes it within 2 s.
        let uri = try #require(try await server.control("POST", "/_jetstream/post?did=\(ada)")["uri"] as? String)
        #expect(try await eventually { try await storedIDs(scratch).contains(uri) }, "\(daemon.log)")
        try await server.control("POST", "/_jetstream/delete?uri=\(uri)")
        #expect(try await eventually { try await !storedIDs(scratch).contains(uri) }, "\(daemon.log)")

        // The library's keepalive pings were answered in time: pongs came back, and that one connection still stands.
        #expect(try await eventually { try await stats(server)["pongs"] as? Int ?? 0 >= 2 })
        let beforeDrop = try await stats(server)
        #expect(beforeDrop["connections"] as? Int == 1, "\(beforeDrop)\n\(daemon.log)")
        #expect(count("event=live_disconnected", in: daemon.log) == 0, "\(daemon.log)")

        // (c) The library closes every connection (1001) and refuses new ones for 2 s; a post published then arrives within 15 s.
        try await server.control("POST", "/_jetstream/drop?refuse=2")
        let away = try #require(try await server.control("POST", "/_jetstream/post?did=\(ada)")["uri"] as? String)
        #expect(try await eventually { try await storedIDs(scratch).contains(away) }, "\(daemon.log)")
        #expect(try await eventually { try await storedIDs(scratch) == live.timeline(server) }, "nothing missing, nothing twice")
        let closes = try await stats(server)["close_codes"] as? [Int] ?? []
        #expect(closes.first == 1001, "our client answers the library's close frame with its code: \(closes)")
        #expect(try await stats(server)["connections"] as? Int ?? 0 >= 2, "\(daemon.log)")
        #expect(daemon.log.contains("the server answered 503"), "the library's refusal is read as the HTTP answer it is: \(daemon.log)")

        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
        #expect(try await eventually { try await stats(server)["close_codes"] as? [Int] ?? [] == [1001, 1001] },
                "SIGTERM closes the socket with a close frame the library reads")
        let atEnd = try await stats(server)
        #expect(atEnd["open"] as? Int == 0, "\(atEnd)")
    }

    @Test func manyFollowsGoInAnOptionsUpdateTheLibraryReadsAndFragmentedEventsArrive() async throws {
        let python = try #require(await WebSocketsLibrary.python.value)
        let server = try ReferenceServer(script: "Fixtures/bluesky/jetstream_websockets.py",
                                         arguments: ["--posts", "20", "--ping-interval", "0.5", "--fragment", "40"], python: python)
        for n in 0..<60 { try await server.control("POST", "/_jetstream/follow?did=did:plc:extra\(n)") }
        let websocket = try #require(try await server.control("GET", "/_jetstream/websocket")["url"] as? String)
        let scratch = try Scratch()
        let daemon = try live.startDaemon(scratch, server, jetstreamURL: websocket)
        #expect(try await eventually { count("event=live_caught_up", in: daemon.log) >= 1 }, "\(daemon.log)")

        // 69 DIDs: requireHello, then an options_update in a masked frame of over 2 KB, which the library unmasks and reads.
        let subscriptions = try await server.control("GET", "/_jetstream/subscriptions")["subscriptions"] as? [[String: Any]] ?? []
        let path = try #require(subscriptions.last { $0["path"] != nil }?["path"] as? String)
        #expect(path.contains("requireHello=true") && !path.contains("wantedDids"), "\(path)")
        let update = subscriptions.last { $0["options_update"] != nil }?["options_update"] as? [String: Any]
        #expect((update?["wantedDids"] as? [String])?.count == 69, "\(subscriptions)")

        // Every event comes as a text frame and continuation frames of 40 characters, pings among them.
        let uri = try #require(try await server.control("POST", "/_jetstream/post?did=\(ada)")["uri"] as? String)
        #expect(try await eventually { try await storedIDs(scratch).contains(uri) }, "\(daemon.log)")
        #expect(try await eventually { try await stats(server)["pongs"] as? Int ?? 0 >= 2 })
        let counts = try await stats(server)
        #expect(counts["connections"] as? Int == 1 && count("event=live_disconnected", in: daemon.log) == 0, "\(counts)\n\(daemon.log)")

        daemon.signal(SIGTERM)
        #expect(await daemon.stopsInTime())
    }
}
