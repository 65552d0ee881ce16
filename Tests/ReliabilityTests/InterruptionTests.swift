import Core
import Foundation
import ProcessTestSupport
import SQLiteCache
import Synchronization
import Sync
import Testing

/// Interrupts a small sync after every step in turn (step k = 1, 2, 3 …), resumes it, and
/// compares the store with an uninterrupted sync's: the result is the same whatever the step.
@Suite struct InterruptionTests {
    /// Counts service calls and cancels the sync at the k-th, as a crash or a stop there would.
    final class Interrupter: Sendable {
        private let state: Mutex<(step: Int, failAt: Int?)>
        init(failAt: Int?) { state = Mutex((0, failAt)) }
        var steps: Int { state.withLock { $0.step } }

        func step(_ name: String) throws {
            let fail = state.withLock { state -> Bool in
                state.step += 1
                return state.step == state.failAt
            }
            if fail { throw CancellationError() }
        }
    }

    static let author = User(id: "u1", handle: "ada", displayName: "Ada")

    static func post(_ n: Int, text: String = "post", videos: [String] = []) -> Post {
        Post(id: PostID("p\(n)"), author: author, text: "\(text) \(n)", createdAt: Date(timeIntervalSince1970: Double(n)),
             videoIDs: videos.map { VideoID($0) })
    }

    /// Four pages: new posts with videos, an edit, a deletion, and an unresolvable video.
    static let pages: [String?: FeedPage] = [
        nil: FeedPage(changes: [.upsert(post(1, videos: ["v1"])), .upsert(post(2)), .upsert(post(3))], nextCursor: FeedCursor(position: "3"), hasMore: true),
        "3": FeedPage(changes: [.upsert(post(4, videos: ["v2", "missing"])), .upsert(post(2, text: "edited"))], nextCursor: FeedCursor(position: "5"), hasMore: true),
        "5": FeedPage(changes: [.delete("p3"), .upsert(post(6))], nextCursor: FeedCursor(position: "7"), hasMore: true),
        "7": FeedPage(changes: [.upsert(post(8, videos: ["v1"]))], nextCursor: FeedCursor(position: "8", validator: "\"v8\""), hasMore: false),
    ]

    struct Posts: PostService {
        let interrupter: Interrupter
        func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage {
            try interrupter.step("page")
            return InterruptionTests.pages[cursor?.position] ?? FeedPage(changes: [], nextCursor: cursor!, hasMore: false)
        }
    }

    struct Auth: AuthenticationService {
        let interrupter: Interrupter
        func logIn() async throws -> Session {
            try interrupter.step("logIn")
            return Session(accessToken: Secret("a"), refreshToken: Secret("r"), expiresAt: Date().addingTimeInterval(3600))
        }
        func refresh(_ session: Session) async throws -> Session { try await logIn() }
    }

    struct Videos: VideoService {
        let interrupter: Interrupter
        func videos(withIDs ids: [VideoID]) async throws -> [Video] {
            try interrupter.step("videos")
            return ids.filter { $0 != "missing" }.map { Video(id: $0, title: "T \($0)", duration: 1, streamURL: URL(string: "https://v/\($0)")!) }
        }
    }

    /// The real SQLite store, with a step before every call a sync makes.
    struct Store: SyncStore {
        let real: SQLiteFeedStore
        let interrupter: Interrupter
        func cursor(ofFeed feed: String) async throws -> FeedCursor? { try interrupter.step("cursor"); return try await real.cursor(ofFeed: feed) }
        func session(of account: AccountKey) async throws -> Session? {
            try interrupter.step("session"); return try await real.session(of: account)
        }
        func saveSession(_ session: Session, of account: AccountKey) async throws {
            try interrupter.step("saveSession"); try await real.saveSession(session, of: account)
        }
        func takeFormerSession(ofFeed feed: String, backend: String) async throws -> Session? {
            try interrupter.step("takeFormerSession"); return try await real.takeFormerSession(ofFeed: feed, backend: backend)
        }
        func lockSession(of account: AccountKey, wait: TimeInterval) async throws -> SessionLock {
            try interrupter.step("lockSession"); return try await real.lockSession(of: account, wait: wait)
        }
        func unlockSession(_ lock: SessionLock) async { await real.unlockSession(lock) }
        func backend(ofFeed feed: String) async throws -> String? { try interrupter.step("backend"); return try await real.backend(ofFeed: feed) }
        func setBackend(_ backend: String, under lease: FeedLease) async throws {
            try interrupter.step("setBackend"); try await real.setBackend(backend, under: lease)
        }
        func videosToResolve(among ids: [VideoID], inFeed feed: String) async throws -> [VideoID] {
            try interrupter.step("videosToResolve"); return try await real.videosToResolve(among: ids, inFeed: feed)
        }
        func unresolvedVideoIDs(inFeed feed: String, limit: Int) async throws -> [VideoID] {
            try interrupter.step("unresolved"); return try await real.unresolvedVideoIDs(inFeed: feed, limit: limit)
        }
        func prepare(_ page: FeedPage) -> SQLitePreparedPage { real.prepare(page) }
        func apply(_ page: SQLitePreparedPage, videos: [Video], under lease: FeedLease,
                   announcing announcer: (any PageAnnouncer)?) async throws -> PageWriteResult {
            try interrupter.step("apply"); return try await real.apply(page, videos: videos, under: lease, announcing: announcer)
        }
        var pagesPerTransaction: Int { real.pagesPerTransaction }
        func apply(_ pages: [(page: SQLitePreparedPage, videos: [Video])], under lease: FeedLease,
                   announcing announcer: (any PageAnnouncer)?) async throws -> [PageWriteResult] {
            try interrupter.step("apply"); return try await real.apply(pages, under: lease, announcing: announcer)
        }
        func saveVideos(_ videos: [Video], under lease: FeedLease) async throws -> Int {
            try interrupter.step("saveVideos"); return try await real.saveVideos(videos, under: lease)
        }
        func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) async throws { try interrupter.step("recordSync"); try await real.recordSync(outcome, under: lease) }
        func acquireLease(onFeed feed: String, holder: String, wait: TimeInterval, onlyIfDue: Bool) async throws -> FeedLease? {
            try interrupter.step("lock"); return try await real.acquireLease(onFeed: feed, holder: holder, wait: wait, onlyIfDue: onlyIfDue)
        }
        func release(_ lease: FeedLease) async { await real.release(lease) }
        func unseenPosts(of walk: FullWalk) async throws -> (unseen: Int, cached: Int) { try await real.unseenPosts(of: walk) }
        func deleteUnseenPosts(of walk: FullWalk, under lease: FeedLease) async throws -> Int { try await real.deleteUnseenPosts(of: walk, under: lease) }
    }

    /// Syncs into the store at `path`, failing at step `failAt`; returns how many steps ran.
    func sync(_ path: String, failAt: Int? = nil) async throws -> Int {
        let real = SQLiteFeedStore(path: path)
        try await real.open()
        let interrupter = Interrupter(failAt: failAt)
        let services = SyncEngine.Services(authentication: Auth(interrupter: interrupter), posts: Posts(interrupter: interrupter),
                                           videos: Videos(interrupter: interrupter), store: Store(real: real, interrupter: interrupter),
                                           requests: RequestCounter())
        // Closed before returning, whatever the run did: the next sync or snapshot opens the
        // same file, and a close still on its way would race it.
        do {
            _ = try await SyncEngine(feed: "home", services: services, sleep: { _ in }).run()
        } catch {
            await real.close()
            throw error
        }
        await real.close()
        return interrupter.steps
    }

    /// Everything a sync leaves that matters: posts with their videos, the cursor, unresolved videos.
    func snapshot(_ path: String) async throws -> String {
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        let posts = try await store.posts(matching: PostQuery(limit: 100)).map {
            "\($0.post.id)|\($0.post.text)|\($0.post.videoIDs.map(\.rawValue))|\($0.videos.map(\.id.rawValue))"
        }
        let cursor = try await store.cursor(ofFeed: "home")
        let unresolved = try await store.unresolvedVideoIDs(inFeed: "home", limit: 100)
        await store.close()
        return "\(posts.sorted())\n\(String(describing: cursor))\n\(unresolved)"
    }

    func freshPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("interrupt-\(UUID().uuidString).sqlite").path
    }

    @Test func resumingAfterAnInterruptionAtAnyStepGivesTheUninterruptedResult() async throws {
        let reference = freshPath()
        let steps = try await sync(reference)
        let expected = try await snapshot(reference)
        #expect(steps > 15, "the sync has many steps to interrupt: \(steps)")

        for k in 1...steps {
            let path = freshPath()
            await #expect(throws: CancellationError.self, "step \(k)") { _ = try await sync(path, failAt: k) }
            _ = try await sync(path)
            #expect(try await snapshot(path) == expected, "interrupted at step \(k) of \(steps)")
        }
    }

    @Test func aSyncRightAfterACompletedOneWritesNoRows() async throws {
        let path = freshPath()
        _ = try await sync(path)
        _ = try await sync(path)   // retries the unresolved video once more, which still fails

        let store = SQLiteFeedStore(path: path)
        try await store.open()
        // recordSync keeps each run's count of page rows written.
        let statuses = try await store.feedStatuses()
        #expect(statuses.first?.postCount == 5)
        await store.close()
        let rows = try String(decoding: runSQLite(path, "SELECT rows_written FROM sync_runs ORDER BY id"), as: UTF8.self)
        #expect(rows.split(separator: "\n").last == "0", "per-run rows written: \(rows)")
    }

    func runSQLite(_ path: String, _ sql: String) throws -> Data {
        try runSQLite3(path, sql).printed
    }
}
