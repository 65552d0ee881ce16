@testable import Bluesky
import Core
import Foundation
import IntegrationKit
import Synchronization
import Testing

/// The Bluesky live source over mocks that record their calls: Jetstream messages as its README
/// shows them, the subscribe request, and the source's handling of a stream (hydration batches,
/// order, DIDs outside the subscription, the options_update path).
@Suite struct BlueskyLiveTests {
    static let owner = "did:plc:owner000000000000000000"
    static func follow(_ n: Int) -> String { "did:plc:follow\(String(format: "%018d", n))" }

    // MARK: Events, from the README's examples

    @Test func readmeExamplesAndOurCollections() throws {
        let like = #"{"did":"did:plc:eygmaihciaxprqvxpfvl6flk","time_us":1725911162329308,"kind":"commit","commit":{"rev":"3l3qo2vutsw2b","operation":"create","collection":"app.bsky.feed.like","rkey":"3l3qo2vuowo2b","record":{"$type":"app.bsky.feed.like","createdAt":"2024-09-09T19:46:02.102Z","subject":{"cid":"bafyreidc6sydkkbchcyg62v77wbhzvb2mvytlmsychqgwf2xojjtirmzj4","uri":"at://did:plc:wa7b35aakoll7hugkrjtf3xf/app.bsky.feed.post/3l3pte3p2e325"}},"cid":"bafyreidwaivazkwu67xztlmuobx35hs2lnfh3kolmgfmucldvhd3sgzcqi"}}"#
        let read = try #require(JetstreamEvent(like))
        #expect(read.did == "did:plc:eygmaihciaxprqvxpfvl6flk" && read.timeMicroseconds == 1725911162329308 && read.change == .other)
        let identity = #"{"did":"did:plc:ufbl4k27gp6kzas5glhz7fim","time_us":1725516665234703,"kind":"identity","identity":{"did":"did:plc:ufbl4k27gp6kzas5glhz7fim","handle":"yohenrique.bsky.social","seq":1409752997,"time":"2024-09-05T06:11:04.870Z"}}"#
        #expect(JetstreamEvent(identity)?.change == .identity(handle: "yohenrique.bsky.social"))
        let account = #"{"did":"did:plc:ufbl4k27gp6kzas5glhz7fim","time_us":1725516665333808,"kind":"account","account":{"active":false,"did":"did:plc:ufbl4k27gp6kzas5glhz7fim","seq":1409753013,"time":"2024-09-05T06:11:04.870Z"}}"#
        #expect(JetstreamEvent(account)?.change == .account(active: false))
        #expect(JetstreamEvent(#"{"kind":"heartbeat","payload":""}"#) == nil)

        let post = #"{"did":"did:plc:a","time_us":5,"kind":"commit","commit":{"rev":"r","operation":"create","collection":"app.bsky.feed.post","rkey":"3k1","record":{"text":"hi"},"cid":"c"}}"#
        #expect(JetstreamEvent(post)?.change == .post(uri: "at://did:plc:a/app.bsky.feed.post/3k1"))
        #expect(JetstreamEvent(post.replacingOccurrences(of: "create", with: "update"))?.change == .post(uri: "at://did:plc:a/app.bsky.feed.post/3k1"))
        #expect(JetstreamEvent(post.replacingOccurrences(of: "create", with: "delete"))?.change == .postDeleted(uri: "at://did:plc:a/app.bsky.feed.post/3k1"))
        let repost = #"{"did":"did:plc:a","time_us":6,"kind":"commit","commit":{"operation":"create","collection":"app.bsky.feed.repost","rkey":"3r","record":{"subject":{"uri":"at://did:plc:b/app.bsky.feed.post/3p","cid":"c"},"createdAt":"2026-01-01T00:00:00Z"}}}"#
        #expect(JetstreamEvent(repost)?.change == .repost(uri: "at://did:plc:a/app.bsky.feed.repost/3r", subject: "at://did:plc:b/app.bsky.feed.post/3p",
                                                           at: "2026-01-01T00:00:00Z"))
        // Hostile: a subject that is not a post, a record key with a slash, a DID that is not one, no time.
        #expect(JetstreamEvent(repost.replacingOccurrences(of: "app.bsky.feed.post/3p", with: "app.bsky.graph.follow/3p"))?.change == .other)
        #expect(JetstreamEvent(post.replacingOccurrences(of: #""rkey":"3k1""#, with: #""rkey":"../x""#))?.change == .other)
        #expect(JetstreamEvent(post.replacingOccurrences(of: "did:plc:a", with: "not-a-did")) == nil)
        #expect(JetstreamEvent(post.replacingOccurrences(of: #""time_us":5,"#, with: "")) == nil)
        #expect(JetstreamEvent("not json") == nil)
        // A time in the future is taken as now: committed, it would be resumed from and skip every event until then.
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let future = post.replacingOccurrences(of: #""time_us":5,"#, with: #""time_us":9000000000000000000,"#)
        #expect(JetstreamEvent(future, now: now)?.timeMicroseconds == 1_800_000_000_000_000)
        #expect(JetstreamEvent(post, now: now)?.timeMicroseconds == 5)
    }

    @Test func hostileMessagesAndGraphPagesAreReadFieldByFieldOrRefused() throws {
        // Fields in any order, a record before its collection, and values of the wrong type counted as absent.
        let reordered = #"{"commit":{"record":{"createdAt":"2026-01-01T00:00:00Z","subject":{"cid":"c","uri":"at://did:plc:b/app.bsky.feed.post/3p"}},"rkey":"3r","collection":"app.bsky.feed.repost","operation":"create"},"kind":"commit","time_us":7,"did":"did:plc:a"}"#
        #expect(JetstreamEvent(reordered)?.change == .repost(uri: "at://did:plc:a/app.bsky.feed.repost/3r", subject: "at://did:plc:b/app.bsky.feed.post/3p",
                                                              at: "2026-01-01T00:00:00Z"))
        #expect(JetstreamEvent(#"{"did":"did:plc:a","time_us":"7","kind":"commit"}"#) == nil, "a time that is not a number")
        #expect(JetstreamEvent(#"{"did":"did:plc:a","time_us":7.5,"kind":"commit"}"#) == nil)
        #expect(JetstreamEvent(#"{"did":"did:plc:a","time_us":7,"kind":"commit","commit":5}"#)?.change == .other)
        #expect(JetstreamEvent(#"{"did":"did:plc:a","time_us":7,"kind":"commit","commit":{"operation":1,"collection":"app.bsky.feed.post","rkey":"3k"}}"#)?.change == .other)
        #expect(JetstreamEvent(#"{"did":"did:plc:a","time_us":7,"kind":"account","account":{"active":"no"}}"#)?.change == .account(active: true))
        #expect(JetstreamEvent(#"{"did":"did:plc:a","time_us":7,"kind":"identity"} {}"#) == nil, "data after the message")
        #expect(JetstreamEvent(#"{"did":"did:plc:a","time_us":7,"kind":"x","deep":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}") == nil)
        #expect(JetstreamEvent("[1]") == nil)

        let follows = try BlueskyGraphPage(body: Data(#"{"follows":[{"did":"did:plc:a","handle":"a.test","displayName":"A"},{"did":"nope","handle":"b.test"},{"did":"did:plc:c"},7],"cursor":"next"}"#.utf8),
                                           list: "follows")
        #expect(follows.profiles == [BlueskyProfile(did: "did:plc:a", handle: "a.test", displayName: "A")] && follows.cursor == "next")
        let list = try BlueskyGraphPage(body: Data(#"{"list":{},"items":[{"uri":"at://x","subject":{"did":"did:plc:m","handle":"m.test"}}],"cursor":""}"#.utf8), list: "items")
        #expect(list.profiles.map(\.did) == ["did:plc:m"] && list.cursor == nil)
        #expect(throws: (any Error).self) { try BlueskyGraphPage(body: Data(#"{"cursor":"x"}"#.utf8), list: "follows") }
        #expect(throws: (any Error).self) { try BlueskyGraphPage(body: Data(#"{"follows":[]"#.utf8), list: "follows") }
        #expect(try BlueskyGraphPage.profile(body: Data(#"{"handle":"p.test","did":"did:plc:p"}"#.utf8))?.did == "did:plc:p")
    }

    // MARK: The subscribe request

    @Test func theRequestCarriesCollectionsDidsAndCursorButNoToken() throws {
        let (source, _, _) = makeSource(follows: 3)
        let request = source.request(for: [Self.follow(1), Self.follow(2)], cursor: 1_700_000_000_000_000)
        let query = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(query.filter { $0.name == "wantedCollections" }.compactMap(\.value) == ["app.bsky.feed.post", "app.bsky.feed.repost"])
        #expect(query.filter { $0.name == "wantedDids" }.compactMap(\.value) == [Self.follow(1), Self.follow(2)])
        #expect(query.first { $0.name == "cursor" }?.value == "1700000000000000")
        #expect(request.headers.isEmpty && !request.followsRedirects)
        let many = source.request(for: (0..<51).map(Self.follow), cursor: nil)
        let manyQuery = URLComponents(url: many.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(manyQuery.contains(URLQueryItem(name: "requireHello", value: "true")) && !manyQuery.contains { $0.name == "wantedDids" || $0.name == "cursor" })
    }

    @Test func theFollowSetIsReadAgainAtTheFeedsIntervalUnlessTheConfigSaysOtherwise() throws {
        func refresh(_ keys: String, interval: TimeInterval?) throws -> TimeInterval? {
            let value = try JSONDecoder().decode(ConfigValue.self, from: Data(#"{"stream": true\#(keys)}"#.utf8))
            guard case .object(let object) = value else { return nil }
            let section = ConfigSection(object, path: "feeds[0].posts", context: ConfigContext(fileName: "f", directory: URL(fileURLWithPath: "/"),
                                                                                                environment: [:]))
            return try BlueskyLiveConfig(section, timeline: .home, timelineText: "home", interval: interval)?.refreshInterval
        }
        #expect(try refresh("", interval: 300) == 300)
        #expect(try refresh("", interval: 1) == 10, "no faster than every 10 s")
        #expect(try refresh("", interval: 7 * 86_400) == 86_400)
        #expect(try refresh("", interval: nil) == 900)
        #expect(try refresh(#", "subscriptionRefreshSeconds": 60"#, interval: 300) == 60)
        #expect(throws: ConfigError.self) { try refresh(#", "subscriptionRefreshSeconds": 5"#, interval: 300) }
    }

    @Test func tenThousandDidsPerConnection() {
        let chunks = BlueskyLiveSource.chunks((0..<20_001).map(Self.follow))
        #expect(chunks.map(\.count) == [10_000, 10_000, 1])
        #expect(Set(chunks.joined()).count == 20_001)
    }

    // MARK: The source over mocks

    @Test func eventsAreHydratedInBatchesInOrderAndStrangersAreIgnored() async throws {
        // The socket stays open after its script: a socket that ends drops what is still being
        // hydrated (the catch-up sync on reconnect fetches it), which would race this count.
        let (source, http, sockets) = makeSource(follows: 120, keepOpen: true)
        var messages = (0..<30).map { Self.postEvent(did: Self.follow($0 % 5), rkey: "p\($0)", time: 100 + Int64($0)) }
        messages.append(Self.postEvent(did: "did:plc:stranger", rkey: "x", time: 200))
        messages.append(Self.postEvent(did: Self.follow(1), rkey: "p1", time: 201, operation: "delete"))
        sockets.script = messages
        // connected, 30 posts and the delete; the stranger's post never comes. Bounded, so a
        // source that stops short fails the test instead of hanging it.
        let collected = try await withThrowingTaskGroup(of: [LiveEvent]?.self) { group in
            group.addTask {
                var events: [LiveEvent] = []
                var positions: [LiveEvent] = []
                for try await event in source.events() {
                    if case .position = event { positions.append(event); continue }
                    events.append(event)
                    if events.count == 32 { break }
                }
                return events
            }
            group.addTask {
                try await Task.sleep(for: .seconds(600))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let events = try #require(collected, "32 events, not a hang (600 s)")
        #expect(events.first == .connected)
        let upserted = events.compactMap { event -> String? in if case .upserted(let post, _) = event { return post.id.rawValue } else { return nil } }
        #expect(upserted == (0..<30).map { "at://\(Self.follow($0 % 5))/app.bsky.feed.post/p\($0)" }, "every post once, in order")
        #expect(events.last == .deleted(PostID("at://\(Self.follow(1))/app.bsky.feed.post/p1")), "the delete after the hydrations before it")
        let hydrations = http.calls.filter { $0.contains("getPosts") }
        #expect(hydrations.allSatisfy { $0.components(separatedBy: "uris=").count - 1 <= 25 } && hydrations.count >= 2)
        #expect(!hydrations.joined().contains("stranger"))
        // 121 DIDs (the follows over two pages, and the account): past the URL's 50, in an options_update.
        #expect(http.calls.filter { $0.contains("getFollows") }.count == 2)
        let sent = try #require(sockets.sent.first)
        let update = try JSONSerialization.jsonObject(with: Data(sent.utf8)) as? [String: Any]
        #expect(update?["type"] as? String == "options_update")
        #expect(((update?["payload"] as? [String: Any])?["wantedDids"] as? [String])?.count == 121)
        #expect(sockets.requests.allSatisfy { $0.headers["Authorization"] == nil })
        // The position moved: a reconnect resumes from the last event, rewound.
        #expect(source.position.resumeCursor(rewind: BlueskyLiveSource.rewind) == max(1, 201 - BlueskyLiveSource.rewind))
    }

    @Test func aChangedFollowSetGoesOutAsAnOptionsUpdateOnTheOpenConnection() async throws {
        let (source, http, sockets) = makeSource(follows: 3, keepOpen: true, refresh: 0.05)
        let consumer = Task {
            for try await _ in source.events() {}   // until cancelled
        }
        // 3 follows and the account: in the URL, nothing sent.
        let deadline = ContinuousClock.now + .seconds(600)
        while sockets.requests.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(sockets.requests.count == 1 && sockets.sent.isEmpty)
        http.follows = 4
        var update: [String] = []
        while update.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            for text in sockets.sent {
                let payload = (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["payload"] as? [String: Any]
                update = payload?["wantedDids"] as? [String] ?? []
            }
        }
        consumer.cancel()
        #expect(Set(update) == Set((0..<4).map(Self.follow) + [Self.owner]), "the new follow, on the same connection")
        #expect(sockets.requests.count == 1, "no reconnect")
    }

    @Test func identityAndAccountEventsAndTheStreamPositionAndAResumeFromTheStoredOne() async throws {
        var (source, _, sockets) = makeSource(follows: 3, keepOpen: true)
        let notices = Mutex<[String]>([])
        source.log = Logger(sentences: { text in notices.withLock { $0.append(text) } })
        let did = Self.follow(1)
        func account(_ active: Bool, _ time: Int64) -> String {
            #"{"did":"\#(did)","time_us":\#(time),"kind":"account","account":{"active":\#(active),"did":"\#(did)","seq":1,"time":"2024-09-05T06:11:04.870Z"}}"#
        }
        sockets.script = [#"{"did":"\#(did)","time_us":300,"kind":"identity","identity":{"did":"\#(did)","handle":"new.test","seq":1}}"#,
                          #"{"did":"\#(did)","time_us":301,"kind":"identity","identity":{"did":"\#(did)","handle":"not a handle"}}"#,
                          account(false, 302), account(false, 303), account(true, 304), Self.postEvent(did: Self.follow(2), rkey: "p", time: 305)]
        var events: [LiveEvent] = []
        for try await event in source.events() {
            events.append(event)
            if event == .position("305") { break }
        }
        #expect(events.contains(.renamed(UserID(did), handle: "new.test", at: Date(timeIntervalSince1970: 0.0003))))
        #expect(!events.contains { if case .renamed(_, let handle, _) = $0 { handle != "new.test" } else { false } }, "a bad handle is dropped")
        #expect(events.contains { if case .upserted(let post, _) = $0 { post.id.rawValue.hasSuffix("/p") } else { false } })
        #expect(events.firstIndex(of: .position("305"))! > events.firstIndex { if case .upserted = $0 { true } else { false } }!,
                "the position follows the changes it covers")
        #expect(notices.withLock { $0 }.count == 2, "deactivated once, active again once: \(notices.withLock { $0 })")

        // A restarted daemon hands the stored positions back: the earliest, rewound.
        let now = Date(timeIntervalSince1970: 1_725_911_200)
        #expect(try await resumeCursor(stored: ["1725911162329308", "1725911100000000", "junk"], now: now)
                == String(1_725_911_100_000_000 - BlueskyLiveSource.rewind))
    }

    /// A post that cannot be mapped is skipped with its reason, as a poll skips it, and the stream
    /// goes on; a repost keeps the time read from the stream, to the microsecond, never one past
    /// when Jetstream saw it.
    @Test func anUnmappablePostIsSkippedAsOnAPolledPageAndARepostKeepsItsTime() async throws {
        let (source, _, sockets) = makeSource(follows: 3, keepOpen: true)
        let (one, two) = (Self.follow(1), Self.follow(2))
        func repost(_ rkey: String, of subject: String, at createdAt: String, time: Int64) -> String {
            #"{"did":"\#(two)","time_us":\#(time),"kind":"commit","commit":{"operation":"create","collection":"app.bsky.feed.repost","rkey":"\#(rkey)","record":{"subject":{"uri":"\#(subject)","cid":"c"},"createdAt":"\#(createdAt)"}}}"#
        }
        let good = "at://\(one)/app.bsky.feed.post/good"
        sockets.script = [Self.postEvent(did: one, rkey: "bad-date", time: 1_700_000_000_000_001), Self.postEvent(did: one, rkey: "good", time: 1_700_000_000_000_002),
                          repost("r1", of: good, at: "2023-11-14T22:13:19.5Z", time: 1_700_000_000_123_456),
                          repost("r2", of: good, at: "2099-01-01T00:00:00Z", time: 1_700_000_000_654_321)]
        var events: [LiveEvent] = []
        for try await event in source.events() {
            events.append(event)
            if event == .position("1700000000654321") { break }
        }

        let skipped = events.compactMap { event -> SkippedItem? in if case .skipped(let item) = event { item } else { nil } }
        let badURI = "at://\(one)/app.bsky.feed.post/bad-date"
        #expect(skipped == [SkippedItem(id: badURI, reason: #"record.createdAt "yesterday" is not an RFC 3339 time"#, postID: PostID(badURI))])
        let reposts = events.compactMap { event -> Post.Repost? in if case .upserted(let post, _) = event { post.repost } else { nil } }
        #expect(reposts.map(\.at) == [Date(timeIntervalSince1970: 1_699_999_999.5), Date(timeIntervalSince1970: 1_700_000_000.654321)],
                "the record's time; the one Jetstream saw for a record dated ahead of it, to the microsecond")
        #expect(events.contains { if case .upserted(let post, _) = $0 { post.id.rawValue == good } else { false } })
    }

    /// A batch handled but not committed (its write failed: an identity event's rename with it)
    /// is streamed again on the reconnect: the committed position wins over the one handled.
    /// A position stored long ago (the feed's `stream` was off for days) resumes an hour back at
    /// most, not from all Jetstream keeps.
    @Test func aReconnectResumesFromTheCommittedPositionAtMostAnHourBack() async throws {
        let now = Date(timeIntervalSince1970: 1_725_911_200)
        let position = JetstreamPosition()
        position.handled(1_725_911_190_000_000)
        #expect(try await resumeCursor(stored: ["1725911150000000"], now: now, position: position)
                == String(1_725_911_150_000_000 - BlueskyLiveSource.rewind), "the committed one, not the one handled")
        position.handled(1_725_911_195_000_000)
        #expect(try await resumeCursor(stored: [], now: now, position: position)
                == String(1_725_911_195_000_000 - BlueskyLiveSource.rewind), "none stored: where this process got to")

        let hourAgo = 1_725_911_200_000_000 - BlueskyLiveSource.maxReplay
        #expect(try await resumeCursor(stored: ["1725000000000000", "1725911150000000"], now: now)
                == String(hourAgo - BlueskyLiveSource.rewind), "days old: an hour back")
        let stale = JetstreamPosition()
        stale.handled(1_725_000_000_000_000)
        #expect(try await resumeCursor(stored: [], now: now, position: stale) == String(hourAgo - BlueskyLiveSource.rewind),
                "a connection down for days resumes an hour back too")
    }

    @Test func aFloodPastTheQueueEndsTheConnection() throws {
        let queue = LiveQueue<BlueskyLiveSource.Item>(overflow: ServiceError(.contractViolation, "following home", "too many"))
        for _ in 0..<queue.capacity { try queue.push(.connected) }
        #expect(throws: ServiceError.self) { try queue.push(.connected) }
    }

    // MARK: Helpers

    /// The `cursor` a source asks Jetstream for when resumed from `stored` at `now`.
    func resumeCursor(stored: [String], now: Date, position: JetstreamPosition = JetstreamPosition()) async throws -> String? {
        let (source, _, sockets) = makeSource(follows: 3, keepOpen: true, position: position)
        let consumer = Task { for try await _ in source.events(resumingFrom: stored, now: now) {} }
        let deadline = ContinuousClock.now + .seconds(600)
        while sockets.requests.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        consumer.cancel()
        let query = URLComponents(url: try #require(sockets.requests.first).url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return query.first { $0.name == "cursor" }?.value
    }

    static func postEvent(did: String, rkey: String, time: Int64, operation: String = "create") -> String {
        #"{"did":"\#(did)","time_us":\#(time),"kind":"commit","commit":{"rev":"r","operation":"\#(operation)","collection":"app.bsky.feed.post","rkey":"\#(rkey)","record":{"text":"hi"},"cid":"c"}}"#
    }

    func makeSource(follows: Int, keepOpen: Bool = false, refresh: TimeInterval = 3600,
                    position: JetstreamPosition = JetstreamPosition()) -> (BlueskyLiveSource, MockXRPC, MockSockets) {
        let http = MockXRPC(follows: follows)
        let sockets = MockSockets(keepOpen: keepOpen)
        let client = BlueskyClient(service: URL(string: "https://pds.example")!, transport: http, requests: RequestCounter(), gate: HostGate(),
                                   pacer: RateLimitPacer(), sessionPacer: RateLimitPacer())
        let session = BlueskyLiveSession(BlueskyAuthenticationService(client: client, identifier: "me.test", password: Secret("pw")))
        let source = BlueskyLiveSource(client: client, session: session, identifier: "me.test", subscription: .follows,
                                       jetstreamURL: URL(string: "wss://jetstream.example/subscribe")!, transport: sockets,
                                       limits: WebSocketLimits(), refreshInterval: refresh, position: position, accounts: BlueskyAccountStates(), accountKey: "k")
        return (source, http, sockets)
    }
}

/// A PDS: createSession, getFollows (pages of 100), getPosts (a plain view per URI asked).
final class MockXRPC: HTTPTransport, Sendable {
    private let count: Mutex<Int>
    var follows: Int {
        get { count.withLock { $0 } }
        set { count.withLock { $0 = newValue } }
    }
    private let log = Mutex<[String]>([])
    var calls: [String] { log.withLock { $0 } }
    var traffic: (any TrafficObserver)? { nil }

    init(follows: Int) { count = Mutex(follows) }

    func close() async {}

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let target = request.target
        log.withLock { $0.append(target) }
        let query = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        if target.contains("createSession") {
            let payload = Data(#"{"sub":"\#(BlueskyLiveTests.owner)","exp":4102444800}"#.utf8).base64EncodedString()
                .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            return HTTPResponse(status: 200, body: Data(#"{"accessJwt":"e30.\#(payload).sig","refreshJwt":"r.e30.s","did":"\#(BlueskyLiveTests.owner)"}"#.utf8))
        }
        if target.contains("getFollows") {
            let start = Int(query.first { $0.name == "cursor" }?.value ?? "0") ?? 0
            let follows = self.follows
            let page = (start..<min(start + 100, follows)).map { #"{"did":"\#(BlueskyLiveTests.follow($0))","handle":"f\#($0).test"}"# }
            let cursor = start + 100 < follows ? #","cursor":"\#(start + 100)""# : ""
            return HTTPResponse(status: 200, body: Data(#"{"follows":[\#(page.joined(separator: ","))]\#(cursor)}"#.utf8))
        }
        if target.contains("getPosts") {
            let views = query.filter { $0.name == "uris" }.compactMap(\.value).map { uri in
                let did = uri.dropFirst(5).split(separator: "/")[0]
                // A post whose record key says so has a date that is none.
                let created = uri.hasSuffix("bad-date") ? "yesterday" : "2026-02-01T00:00:00Z"
                return #"{"uri":"\#(uri)","cid":"bafy","author":{"did":"\#(did)","handle":"a.test"},"record":{"text":"hi","createdAt":"\#(created)"},"indexedAt":"2026-02-01T00:00:00Z"}"#
            }
            return HTTPResponse(status: 200, body: Data(#"{"posts":[\#(views.joined(separator: ","))]}"#.utf8))
        }
        return HTTPResponse(status: 501, body: Data(#"{"error":"MethodNotImplemented"}"#.utf8))
    }
}

/// Jetstream: opens, sends its script, then ends; records the requests and what was sent on it.
final class MockSockets: WebSocketTransport, Sendable {
    private let state = Mutex<(script: [String], requests: [HTTPRequest], outboxes: [WebSocketOutbox])>(([], [], []))
    /// Whether a stream stays open after its script (as a quiet Jetstream does).
    let keepOpen: Bool

    init(keepOpen: Bool = false) { self.keepOpen = keepOpen }
    var script: [String] {
        get { state.withLock { $0.script } }
        set { state.withLock { $0.script = newValue } }
    }
    var requests: [HTTPRequest] { state.withLock { $0.requests } }
    var sent: [String] { state.withLock { $0.outboxes.flatMap { $0.take() } } }

    func webSocket(_ request: HTTPRequest, limits: WebSocketLimits) -> WebSocketStream {
        let outbox = WebSocketOutbox()
        let script = state.withLock { state in
            state.requests.append(request)
            state.outboxes.append(outbox)
            return state.script
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: WebSocketEvent.self, throwing: (any Error).self)
        continuation.yield(.opened)
        for text in script { continuation.yield(.text(text)) }
        if !keepOpen { continuation.finish() }
        return WebSocketStream(stream, outbox: outbox)
    }
}
