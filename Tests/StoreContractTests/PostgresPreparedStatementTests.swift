import Core
import Foundation
@testable import PostgresStore
import PostgresTestSupport
import Testing

/// A statement with parameters that runs again is prepared once on the session and then run by
/// name; values still travel apart; a session that lost its statements (a pooler) stops it.
@Suite(.needsPostgres)
struct PostgresPreparedStatementTests {
    private static let probe = "SELECT $1::text || '/' || $2::text"

    private func prepared(_ store: PostgresFeedStore, _ sql: String) async throws -> Int {
        let rows = try await store.run("reading the session's statements", "SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", [sql])
        return Int(rows.first?.first.flatMap { $0 } ?? "") ?? -1
    }

    @Test func aStatementIsPreparedAtItsSecondRunAndRunByNameAfter() async throws {
        let (store, _) = try await makeWorkers()
        #expect(try await store.run("first", Self.probe, ["a", "b"]) == [["a/b"]])
        #expect(try await prepared(store, Self.probe) == 0, "a statement run once is not prepared")
        #expect(try await store.run("second", Self.probe, ["c", nil]) == [[nil]])
        #expect(try await prepared(store, Self.probe) == 1)
        for round in 0 ..< 5 {
            #expect(try await store.run("again", Self.probe, ["x\(round)", "it's; DROP"]) == [["x\(round)/it's; DROP"]])
        }
        #expect(try await prepared(store, Self.probe) == 1, "prepared once, run by its name")
        #expect(try await prepared(store, "SELECT 1") == 0)
    }

    @Test func aPageOnAPreparedSessionStillCostsTwoRoundTripsAndUsesItsStatements() async throws {
        let (store, _) = try await makeWorkers()
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        for page in 1 ... 4 {
            _ = try await store.apply(store.prepare(makePage([.upsert(makePost("p\(page)", text: "page \(page)"))], cursor: "\(page)")),
                                      videos: [], under: lease, announcing: nil)
            #expect(await store.lastPageRoundTripsForTests == 2, "page \(page)")
        }
        #expect(try await prepared(store, PostgresFeedStore.upsertPostsFromJSON) == 1)
        #expect(try await store.posts(matching: PostQuery(feed: "home")).map(\.post.text).sorted() == ["page 1", "page 2", "page 3", "page 4"])
    }

    /// A pooler that hands the session on loses its statements: the run that meets it fails once,
    /// then every statement goes unnamed on that connection.
    @Test func aSessionThatLostItsStatementsFailsOnceAndStopsPreparing() async throws {
        let (store, _) = try await makeWorkers()
        for value in ["a", "b", "c"] { _ = try await store.run("warming", Self.probe, [value, value]) }
        #expect(try await prepared(store, Self.probe) == 1)
        try await store.run("losing them", "DEALLOCATE ALL")
        let error = await #expect(throws: ServiceError.self) { try await store.run("after the loss", Self.probe, ["d", "d"]) }
        #expect(error?.code == .storage)
        for value in ["e", "f", "g"] {
            #expect(try await store.run("unnamed", Self.probe, [value, "1"]) == [["\(value)/1"]])
        }
        #expect(try await prepared(store, Self.probe) == 0, "nothing is prepared again on this connection")
    }
}
