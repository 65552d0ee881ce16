import Core
import Foundation
import PostgresStore
import PostgresTestSupport
import ProcessTestSupport
import SQLiteCache
import Testing

/// What migrations SQLite 023 / PostgreSQL 017 added, the same on both stores: a video's likes
/// and author round-trip, and the `media_files` view lists, per post and per address, the remote
/// URL beside the archive's file (its path in the media folder), read with the engine's own client.
enum VideoDetailsContract {
    /// A store, and a way to run SQL on its database with the engine's own client (`sqlite3`, `psql`).
    static func makeStore(_ kind: StoreKind) async throws -> (any FeedStore, @Sendable (String) async throws -> String) {
        switch kind {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString).sqlite").path
            let store = SQLiteFeedStore(path: path, busyTimeoutMilliseconds: 5_000)
            try await store.open()
            return (store, { try output("/usr/bin/sqlite3", [path, $0]) })
        case .postgres:
            guard await PostgresServer.folder() != nil else { try Test.cancel("needs a PostgreSQL server the tests can start") }
            let database = try await PostgresServer.makeDatabase()
            let store = PostgresFeedStore(conninfo: database.url, leasePeriod: 30)
            try await store.open()
            return (store, { try output("/usr/bin/psql", database.psqlArguments($0)) })
        }
    }

    /// What `tool` printed, trimmed; throws when it failed.
    static func output(_ tool: String, _ arguments: [String]) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("contract-out-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try FileHandle(forWritingTo: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        try launch(process)
        process.waitUntilExit()
        try handle.close()
        let text = try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0 else { throw ToolFailed(description: "\(tool) failed: \(text)") }
        return text
    }

    static func likesAndAuthorRoundTrip(_ kind: StoreKind) async throws {
        let (store, sql) = try await makeStore(kind)
        let video = Video(id: "https://tube.example/w/abc", title: "A walk", duration: 754, streamURL: URL(string: "https://tube.example/m/abc.m3u8")!,
                          viewCount: 1234, likeCount: 56, author: "A walker")
        var post = makePost("p1")
        post.videoIDs = [video.id]
        try await underLease(store) { lease in _ = try await store.apply(makePage([.upsert(post)], cursor: "1"), videos: [video], under: lease) }
        #expect(try await store.posts(matching: PostQuery(feed: "home")).first?.videos == [video])
        #expect(try await sql("SELECT like_count, author FROM videos") == "56|A walker")
        // A changed like count is a change of the row; a host that says nothing leaves both empty.
        var liked = video
        liked.likeCount = 57
        liked.author = nil
        try await underLease(store) { lease in _ = try await store.apply(makePage([.upsert(post)], cursor: "2"), videos: [liked], under: lease) }
        #expect(try await store.posts(matching: PostQuery(feed: "home")).first?.videos == [liked])
        #expect(try await sql("SELECT like_count, COALESCE(author, '-') FROM videos") == "57|-")
    }

    static func mediaFilesShowsTheLocalPathBesideTheRemoteOne(_ kind: StoreKind) async throws {
        let (store, sql) = try await makeStore(kind)
        let now = MediaLedgerContract.now
        try await store.recordMedia([MediaLedgerContract.reference("home", "p1", "a.png", at: 100),
                                     MediaLedgerContract.reference("news", "n1", "a.png", at: 300),
                                     MediaLedgerContract.reference("home", "p2", "b.png", at: 200)], at: now)
        let due = try await store.mediaDue(limit: 10, includingSkipped: false)
        var fetched = try #require(due.first { $0.item.url.lastPathComponent == "a.png" }).item
        fetched.status = .fetched
        fetched.digest = "ab12" + String(repeating: "0", count: 60)
        fetched.bytes = 2048
        fetched.mediaType = "image/png"
        fetched.fetchedAt = now
        fetched.attempts = 1
        try await store.recordMediaOutcomes([fetched])
        let rows = try await sql("SELECT feed, post_id, url, COALESCE(path, '-'), status, COALESCE(bytes, 0) FROM media_files ORDER BY feed, post_id")
        let path = "ab/12/ab12" + String(repeating: "0", count: 60)
        #expect(rows == """
            home|p1|https://media.example/a.png|\(path)|fetched|2048
            home|p2|https://media.example/b.png|-|pending|0
            news|n1|https://media.example/a.png|\(path)|fetched|2048
            """, "\(rows)")
    }
}

/// A client that exited with an error, and what it printed.
struct ToolFailed: Error, CustomStringConvertible { var description: String }

@Suite struct SQLiteVideoDetailsContractTests {
    @Test func likesAndAuthorRoundTrip() async throws { try await VideoDetailsContract.likesAndAuthorRoundTrip(.sqlite) }
    @Test func mediaFiles() async throws { try await VideoDetailsContract.mediaFilesShowsTheLocalPathBesideTheRemoteOne(.sqlite) }
}

@Suite(.needsPostgres) struct PostgresVideoDetailsContractTests {
    @Test func likesAndAuthorRoundTrip() async throws { try await VideoDetailsContract.likesAndAuthorRoundTrip(.postgres) }
    @Test func mediaFiles() async throws { try await VideoDetailsContract.mediaFilesShowsTheLocalPathBesideTheRemoteOne(.postgres) }
}
