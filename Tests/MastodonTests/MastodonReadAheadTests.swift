import Core
import Foundation
import IntegrationKit
@testable import Mastodon
import Testing

/// A first walk back asks for its next page while it decodes the one it has, and never past a
/// bound it may reach: the same requests, in the same order, as one page at a time.
@Suite struct MastodonReadAheadTests {
    static let server = "http://127.0.0.1:1/api/v1/timelines/home"

    /// A page of 40 statuses numbered down from `top`, linking to the page below when `next`.
    static func timelinePage(_ top: Int, next: Int?) -> HTTPResponse {
        let statuses = (0 ..< 40).map { status(String(top - $0)) }
        let headers = next.map { ["Link": "<\(server)?max_id=\($0)>; rel=\"next\""] } ?? [:]
        return HTTPResponse(status: 200, headers: headers, body: page(statuses))
    }

    /// Three pages: 300…261, 260…221, 220…181, the last without a next link.
    static let threePages = [timelinePage(300, next: 261), timelinePage(260, next: 221), timelinePage(220, next: nil)]

    /// Walks from the top while pages say there is more, returning the ids of each page and
    /// whether a page was on its way ahead after each.
    func walk(_ service: MastodonPostService) async throws -> (ids: [[String]], ahead: [Bool]) {
        var (ids, ahead) = ([[String]](), [Bool]())
        var cursor: FeedCursor?
        while true {
            let page = try await service.page(after: cursor, session: nil)
            ids.append(page.changes.compactMap { if case .upsert(let post) = $0 { post.id.rawValue } else { nil } })
            ahead.append(await service.readAhead.isPending)
            guard page.hasMore else { return (ids, ahead) }
            cursor = page.nextCursor
        }
    }

    @Test func eachPageIsAskedForOnceInOrderAndTheNextWhileThisOneIsRead() async throws {
        let transport = StubTransport(Self.threePages)
        let service = makePostService(transport)

        let (ids, ahead) = try await walk(service)

        #expect(ids.map(\.first) == ["261", "221", "181"], "oldest first within each page, each page once")
        #expect(ahead == [true, true, false], "the next page is on its way once a page is read; none after the one without a next link")
        #expect(transport.requests.map(\.query) == ["limit=40", "max_id=261&limit=40", "max_id=221&limit=40"])
    }

    @Test func theNextLinksOwnLimitGivesWayToThePageSizeAndItsOtherItemsStayAsWritten() async throws {
        let link = ["Link": "<\(Self.server)?limit=20&max_id=261&exclude_types%5B%5D=follow&only_media=false&limit=5>; rel=\"next\""]
        let first = HTTPResponse(status: 200, headers: link, body: Self.timelinePage(300, next: nil).body)
        let transport = StubTransport([first, Self.threePages[2]])
        let service = makePostService(transport)

        _ = try await walk(service)

        #expect(transport.requests.map(\.query) == ["limit=40", "max_id=261&exclude_types%5B%5D=follow&only_media=false&limit=40"])
    }

    @Test func noPageIsAskedForPastMaxPosts() async throws {
        let transport = StubTransport(Self.threePages)
        let service = makePostService(transport, maxPosts: 50)

        let (ids, ahead) = try await walk(service)

        #expect(ids.map(\.count) == [40, 10])
        #expect(ahead == [true, false])
        #expect(transport.requests.count == 2, "the second page may be the last, so the third is not asked for: \(transport.requests)")
    }

    @Test func aWalkBoundedBySinceReadsNoPageAhead() async throws {
        let transport = StubTransport(Self.threePages)
        let service = makePostService(transport, since: Date(timeIntervalSince1970: 0))

        _ = try await service.page(after: nil, session: nil)

        #expect(await !service.readAhead.isPending)
        #expect(transport.requests.count == 1)
    }

    @Test(arguments: ["not json", "[]", String(repeating: "[", count: 600) + String(repeating: "]", count: 600)])
    func aPageThatCannotBeReadOrHoldsNothingAsksForNoneAhead(body: String) async throws {
        let link = ["Link": "<\(Self.server)?max_id=261>; rel=\"next\""]
        let transport = StubTransport([HTTPResponse(status: 200, headers: link, body: Data(body.utf8)), Self.threePages[1]])
        let service = makePostService(transport)

        _ = try? await service.page(after: nil, session: nil)

        #expect(await !service.readAhead.isPending)
        #expect(transport.requests.count == 1)
    }

    @Test func aPageThatFailedAheadFailsItsTurnAndIsAskedForAgain() async throws {
        let transport = StubTransport([Self.threePages[0], HTTPResponse(status: 503), Self.threePages[1], Self.threePages[2]])
        let service = makePostService(transport)

        let first = try await service.page(after: nil, session: nil)
        await #expect(throws: ServiceError.self) { try await service.page(after: first.nextCursor, session: nil) }
        let second = try await service.page(after: first.nextCursor, session: nil)
        let third = try await service.page(after: second.nextCursor, session: nil)

        #expect(third.hasMore == false && third.changes.count == 40)
        #expect(transport.requests.map(\.query) == ["limit=40", "max_id=261&limit=40", "max_id=261&limit=40", "max_id=221&limit=40"])
    }
}
