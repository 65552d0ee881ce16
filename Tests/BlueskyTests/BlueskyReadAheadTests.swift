@testable import Bluesky
import Core
import Foundation
import IntegrationKit
import Synchronization
import Testing

/// A first walk back asks for the page after the server's cursor while it maps the one it has,
/// never past a bound it may reach, and only with the session that asked.
@Suite(.timeLimit(.minutes(10))) struct BlueskyReadAheadTests {
    /// Answers every request with the next scripted response, recording the cursor asked for.
    final class Script: HTTPTransport {
        private let responses: Mutex<[HTTPResponse]>
        private let sent = Mutex<[String]>([])

        init(_ responses: [HTTPResponse]) { self.responses = Mutex(responses) }

        /// The `cursor` of each request so far ("-" for none), in order.
        var cursors: [String] { sent.withLock { $0 } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let cursor = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "cursor" }?.value
            sent.withLock { $0.append(cursor ?? "-") }
            guard let next = responses.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
                throw ServiceError(.unavailable, "sending", "the connection was refused")
            }
            return next
        }

        func close() async {}
    }

    /// A page of 30 posts numbered down from `top`, with the server's cursor `next`.
    static func timelinePage(_ top: Int, next: String?) -> HTTPResponse {
        let items = (0 ..< 30).map { index in
            let number = top - index
            return #"{"post": {"uri": "at://did:plc:bob/app.bsky.feed.post/p\#(number)", "cid": "c\#(number)", "indexedAt": "2026-02-01T00:00:\#(String(format: "%02d", number % 60))Z", "author": {"did": "did:plc:bob", "handle": "bob.test"}, "record": {"text": "post \#(number)", "createdAt": "2026-02-01T00:00:00Z"}}}"#
        }
        let cursor = next.map { #", "cursor": "\#($0)""# } ?? ""
        return HTTPResponse(status: 200, body: Data(#"{"feed": [\#(items.joined(separator: ","))]\#(cursor)}"#.utf8))
    }

    static let threePages = [timelinePage(90, next: "c60"), timelinePage(60, next: "c30"), timelinePage(30, next: nil)]

    func makeService(_ transport: Script, maxPosts: Int? = nil, since: Date? = nil) -> BlueskyPostService {
        let client = BlueskyClient(service: URL(string: "http://127.0.0.1:1")!, transport: transport, requests: RequestCounter(),
                                   gate: HostGate(), pacer: RateLimitPacer(), sessionPacer: RateLimitPacer())
        // Fresh for an hour: on a machine busy with every other test, a task may wait its turn for long.
        return BlueskyPostService(client: client, timeline: .home, filter: nil, identifier: "bob.test", pageSize: 30,
                                  maxPosts: maxPosts, since: since, readAhead: ReadAhead(freshFor: .seconds(3_600)))
    }

    func session(_ token: String) -> Session { Session(accessToken: Secret(token)) }

    /// Walks from the top while pages say there is more: the posts of each page, and whether a
    /// page was on its way ahead after each.
    func walk(_ service: BlueskyPostService) async throws -> (counts: [Int], ahead: [Bool]) {
        var (counts, ahead) = ([Int](), [Bool]())
        var cursor: FeedCursor?
        while true {
            let page = try await service.page(after: cursor, session: session("token-1"))
            counts.append(page.changes.count)
            ahead.append(await service.readAhead.isPending)
            guard page.hasMore else { return (counts, ahead) }
            cursor = page.nextCursor
        }
    }

    @Test func eachPageIsAskedForOnceInOrderAndTheNextWhileThisOneIsMapped() async throws {
        let transport = Script(Self.threePages)
        let service = makeService(transport)

        let (counts, ahead) = try await walk(service)

        #expect(counts == [30, 30, 30])
        #expect(ahead == [true, true, false], "none after the page without a cursor")
        #expect(transport.cursors == ["-", "c60", "c30"])
    }

    @Test func noPageIsAskedForPastMaxPosts() async throws {
        let transport = Script(Self.threePages)
        let service = makeService(transport, maxPosts: 40)

        let (counts, ahead) = try await walk(service)

        #expect(counts == [30, 10])
        #expect(ahead == [true, false])
        #expect(transport.cursors == ["-", "c60"])
    }

    @Test func aWalkBoundedBySinceReadsNoPageAhead() async throws {
        let transport = Script(Self.threePages)
        let service = makeService(transport, since: Date(timeIntervalSince1970: 0))

        _ = try await service.page(after: nil, session: session("token-1"))

        #expect(await !service.readAhead.isPending)
        #expect(transport.cursors == ["-"])
    }

    /// A renewed session asks again with its own token: a page fetched with the old one is dropped.
    @Test func aPageFetchedAheadWithAnotherTokenIsAskedForAgain() async throws {
        let transport = Script([Self.threePages[0], HTTPResponse(status: 400, body: Data(#"{"error":"ExpiredToken"}"#.utf8)), Self.threePages[1]])
        let service = makeService(transport, maxPosts: 60)

        let first = try await service.page(after: nil, session: session("token-1"))
        while transport.cursors.count < 2 { try await Task.sleep(for: .milliseconds(1)) }   // the page ahead was asked for
        let second = try await service.page(after: first.nextCursor, session: session("token-2"))

        #expect(second.changes.count == 30, "the page asked for again with the new token, not the old token's refusal")
        #expect(transport.cursors == ["-", "c60", "c60"])
    }
}
