import Core
import Foundation
@testable import PostgresStore
@testable import SQLiteCache
import StoreKit
import Testing

/// What the two stores once did each their own way and now do one way (issue 35): times, the
/// JSON columns, a changed profile reaching the posts, the live-state table. Each test runs the
/// same steps on both stores and expects the same outcome, down to the text another tool reads.
enum ParityContract {
    /// 1_700_000_000.9995 s is 1_700_000_000_999.5 ms: both stores round it, half up, to
    /// 1_700_000_001_000 (``StoredTime``), wherever a time is kept. PostgreSQL once truncated a
    /// live state's time (to …_999).
    static func aTimeBetweenTwoMillisecondsIsRoundedAlikeWhereverItIsKept(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let time = Date(timeIntervalSince1970: 1_700_000_000.9995)
        let rounded = Date(timeIntervalSince1970: 1_700_000_001)
        let stored = [["1700000001000"]]
        var post = makePost("p1", at: 1_700_000_000.9995)
        post.editedAt = time
        post.repost = Post.Repost(by: User(id: "u2", handle: "grace", displayName: "Grace"), originalID: "o1", at: time)
        _ = try await store.commit(makePage([.upsert(post)], cursor: "1"))
        let read = try #require(try await other.posts(matching: PostQuery(feed: "home")).first?.post)
        #expect(read.createdAt == rounded && read.editedAt == rounded && read.repost?.at == rounded)
        #expect(try await rawSQL(other, "SELECT created_at, edited_at, repost_at FROM posts") == [["1700000001000", "1700000001000", "1700000001000"]])
        #expect(try await rawSQL(other, "SELECT profile_at FROM users ORDER BY id") == stored + stored, "the author's and the reposter's")

        try await underLease(store) { lease in try await store.recordSync(SyncOutcome(startedAt: time, finishedAt: time), under: lease) }
        try await store.setNextAttempt(time, ofFeed: "home")
        let status = try #require(try await other.feedStatuses().first)
        #expect(status.lastSuccessAt == rounded && status.nextAttemptAt == rounded)
        #expect(try await rawSQL(other, "SELECT started_at, finished_at FROM sync_runs") == [["1700000001000", "1700000001000"]])

        let account = AccountKey(integration: "httpapi", server: "https://a.example", account: "me")
        try await store.saveSession(Session(accessToken: Secret("token-0123456789"), expiresAt: time), of: account)
        #expect(try await other.session(of: account)?.expiresAt == rounded)

        let live = StoreSQL(kind == .sqlite ? .sqlite : .postgres).setLiveState("live since then", ofFeed: "home", at: time)
        try await (store as? any SQLStore)?.run("recording a live state", live)
        #expect(try await rawSQL(other, "SELECT at FROM live_state") == stored)
        #expect(try await other.liveStates() == ["home": "live since then"])
    }

    /// `video_ids`, `labels` and `attachments` hold the same JSON text in both stores, as
    /// `JSONEncoder` writes it (short escapes, slashes as they are), and read back as written.
    static func theJSONColumnsHoldTheSameTextInBoth(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        var post = makePost("p1")
        post.videoIDs = [VideoID("v\"1"), VideoID("v\\2\n")]
        post.labels = ["a\tb", "c\u{1}d", "e/f", "é🎉"]
        post.attachments = [Post.Attachment(kind: "image", url: URL(string: "https://m.example/i.png")!,
                                            description: "line\nbreak \"quoted\"", width: 3, height: 4, duration: 1.5)]
        _ = try await store.commit(makePage([.upsert(post)], cursor: "1"))
        #expect(try await rawSQL(other, "SELECT video_ids, labels, attachments FROM posts") == [[
            #"["v\"1","v\\2\n"]"#, #"["a\tb","c\u0001d","e/f","é🎉"]"#,
            #"[{"description":"line\nbreak \"quoted\"","duration_ms":1500,"height":4,"kind":"image","url":"https://m.example/i.png","width":3}]"#,
        ]])
        let read = try #require(try await other.posts(matching: PostQuery(feed: "home")).first?.post)
        #expect(read.videoIDs == post.videoIDs && read.labels == post.labels && read.attachments == post.attachments)
        #expect(try await store.commit(makePage([.upsert(post)], cursor: "1")).unchanged == 1, "the same text: nothing rewritten")
    }

    /// A handle or name changed by any statement, here another tool's `UPDATE`, reaches the
    /// author's posts and their search in that statement: the same trigger in both stores.
    static func aProfileChangedByAnyStatementReachesThePostsAndTheirSearch(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1", text: "first")), .upsert(makePost("p2", text: "second", at: 1_700_000_100))],
                                            cursor: "2"))
        _ = try await rawSQL(store, "UPDATE users SET handle = 'lovelace', display_name = 'Countess' WHERE id = 'u1'")
        #expect(try await rawSQL(other, "SELECT DISTINCT author_handle, author_name FROM posts") == [["lovelace", "Countess"]])
        #expect(try await other.search(SearchQuery(text: "countess")).map(\.stored.post.id).sorted() == ["p1", "p2"])
        #expect(try await other.search(SearchQuery(text: "ada")).isEmpty)
        #expect(try await other.posts(matching: PostQuery(feed: "home")).allSatisfy { $0.post.author.handle == "lovelace" })
    }

    /// `live_state` is part of the schema from the first open, before any daemon streams.
    static func theLiveStateTableIsThereBeforeAnyLiveState(_ kind: StoreKind) async throws {
        let (_, other) = try await makeStores(kind)
        #expect(try await rawSQL(other, "SELECT COUNT(*) FROM live_state") == [["0"]])
        #expect(try await other.liveStates().isEmpty)
    }
}

/// Runs `sql` straight on the store's database, as another program would, on a connection of
/// its own (SQLite) or the store's (PostgreSQL); every value as text.
func rawSQL(_ store: any FeedStore, _ sql: String) async throws -> [[String?]] {
    if let store = store as? PostgresFeedStore { return try await store.run("running the test's SQL", sql) }
    let path = try #require(store as? SQLiteFeedStore).path
    let db = try SQLiteDatabase(path: path)
    db.setBusyTimeout(milliseconds: 5_000)
    let statement = try db.statement(sql)
    return try statement.query { row in row.columnNames.indices.map { row.text($0) } }
}

@Suite struct SQLiteParityContractTests {
    @Test func aTimeBetweenTwoMillisecondsIsRoundedAlikeWhereverItIsKept() async throws {
        try await ParityContract.aTimeBetweenTwoMillisecondsIsRoundedAlikeWhereverItIsKept(.sqlite)
    }
    @Test func theJSONColumnsHoldTheSameTextInBoth() async throws { try await ParityContract.theJSONColumnsHoldTheSameTextInBoth(.sqlite) }
    @Test func aProfileChangedByAnyStatementReachesThePostsAndTheirSearch() async throws {
        try await ParityContract.aProfileChangedByAnyStatementReachesThePostsAndTheirSearch(.sqlite)
    }
    @Test func theLiveStateTableIsThereBeforeAnyLiveState() async throws { try await ParityContract.theLiveStateTableIsThereBeforeAnyLiveState(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresParityContractTests {
    @Test func aTimeBetweenTwoMillisecondsIsRoundedAlikeWhereverItIsKept() async throws {
        try await ParityContract.aTimeBetweenTwoMillisecondsIsRoundedAlikeWhereverItIsKept(.postgres)
    }
    @Test func theJSONColumnsHoldTheSameTextInBoth() async throws { try await ParityContract.theJSONColumnsHoldTheSameTextInBoth(.postgres) }
    @Test func aProfileChangedByAnyStatementReachesThePostsAndTheirSearch() async throws {
        try await ParityContract.aProfileChangedByAnyStatementReachesThePostsAndTheirSearch(.postgres)
    }
    @Test func theLiveStateTableIsThereBeforeAnyLiveState() async throws { try await ParityContract.theLiveStateTableIsThereBeforeAnyLiveState(.postgres) }
}
