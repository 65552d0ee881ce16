import Core
import Foundation
import SQLiteCache
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The SQLite cache on a real database file in a fresh temporary folder.
/// The lease the store's feed writes are made under. SQLite's lease is this process's lock on
/// the file, which it cannot lose, so its writes take the lease without checking it.
private let home = FeedLease(feed: "home", token: "this process")

@Suite struct SQLiteFeedStoreTests {
    let folder: URL
    let path: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedsync-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("cache.sqlite").path
    }

    func makeStore() async throws -> SQLiteFeedStore {
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        return store
    }

    func makePost(_ id: String, text: String = "hello", author: String = "u1", videos: [String] = [],
                  edited: Date? = nil) -> Post {
        Post(id: PostID(id), author: User(id: UserID(author), handle: "h\(author)", displayName: "User \(author)"),
             text: text, createdAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(id.hashValue % 1000)),
             editedAt: edited, counts: .init(replies: 1, reposts: 2, likes: 3), videoIDs: videos.map { VideoID($0) })
    }

    func page(_ changes: [FeedChange], cursor: String) -> FeedPage {
        FeedPage(changes: changes, nextCursor: FeedCursor(position: cursor, validator: "\"v\(cursor)\""), hasMore: false)
    }

    /// Runs SQL through the sqlite3 command-line tool, as another program reading the cache would.
    func sqlite(_ sql: String) throws -> String {
        try sqlite3(path, sql).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func migrationsAreRecordedAndTheFileIsPrivateAndInWALMode() async throws {
        _ = try await makeStore()
        let again = try await makeStore()   // opening twice applies nothing twice
        _ = again
        #expect(try sqlite("SELECT name FROM schema_migrations ORDER BY name") == "001_create_feed_tables\n002_daemon_state\n003_sync_run_counts\n004_rich_posts\n005_backend_identity_private_sessions\n006_titles_links_quotes_labels_fresh_authors\n007_web_feed_polling\n008_datasette_links_search\n009_daemon_instances\n010_sweep_withheld\n011_video_stats_discovered_feeds\n012_live_stream\n013_live_state\n014_stars_serve_users\n015_webhook_deliveries\n016_media\n017_serve_users_private\n018_retention_record\n019_posts_listing\n021_feed_versions\n023_video_likes_author_media_files\n026_posts_by_time_id\n027_video_links_by_key\n028_store_links_new_posts")
        #expect(try sqlite("PRAGMA journal_mode") == "wal")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aPageWritesPostsAuthorsVideosAndCursorTogether() async throws {
        let store = try await makeStore()
        let result = try await store.apply(page([.upsert(makePost("p1", videos: ["v1"])), .upsert(makePost("p2", author: "u2"))], cursor: "2"),
                                           videos: [Video(id: "v1", title: "Clip", duration: 12.5, streamURL: URL(string: "https://x/v1")!)],
                                           under: testLease("home"))

        #expect(result.inserted == 2 && result.updated == 0)
        #expect(try sqlite("SELECT COUNT(*) FROM posts") == "2")
        #expect(try sqlite("SELECT COUNT(*) FROM users") == "2")
        #expect(try sqlite("SELECT title, duration_ms, resolved FROM videos") == "Clip|12500|1")
        #expect(try await store.cursor(ofFeed: "home") == FeedCursor(position: "2", validator: "\"v2\""))
        #expect(try sqlite("SELECT value FROM posts, json_each(posts.video_ids) WHERE posts.id = 'p1'") == "v1")
    }

    @Test func anUnchangedPostIsNotRewrittenAndAnEditIsApplied() async throws {
        let store = try await makeStore()
        _ = try await store.apply(page([.upsert(makePost("p1")), .upsert(makePost("p2"))], cursor: "2"), videos: [], under: testLease("home"))

        let same = try await store.apply(page([.upsert(makePost("p1")), .upsert(makePost("p2"))], cursor: "2"), videos: [], under: testLease("home"))
        #expect(same.unchanged == 2 && same.rowsWritten == 0)

        let edited = try await store.apply(page([.upsert(makePost("p1", text: "edited", edited: Date(timeIntervalSince1970: 1_800_000_000)))], cursor: "3"),
                                           videos: [], under: testLease("home"))
        #expect(edited.updated == 1)
        #expect(edited.rowsWritten == 2, "the post and the cursor")
        #expect(try sqlite("SELECT text, edited_at FROM posts WHERE id = 'p1'") == "edited|1800000000000")
    }

    @Test func deletionsRemovePostsAndReadMarksSurviveResyncs() async throws {
        let store = try await makeStore()
        _ = try await store.apply(page([.upsert(makePost("p1")), .upsert(makePost("p2"))], cursor: "2"), videos: [], under: testLease("home"))
        #expect(try await store.setRead(true, postID: "p2", inFeed: nil) == ["home"])

        let result = try await store.apply(page([.delete("p1"), .delete("p-unknown"), .upsert(makePost("p2", text: "new text"))], cursor: "5"),
                                           videos: [], under: testLease("home"))

        #expect(result.deleted == 1)
        let posts = try await store.posts(matching: PostQuery())
        #expect(posts.map(\.post.id) == ["p2"])
        #expect(posts.first?.isRead == true)
        #expect(try await store.posts(matching: PostQuery(unreadOnly: true)).isEmpty)
        _ = try await store.setRead(false, postID: "p2", inFeed: "home")
        #expect(try await store.posts(matching: PostQuery(unreadOnly: true)).count == 1)
    }

    @Test func changesWithinOnePageApplyInTheirOrder() async throws {
        let store = try await makeStore()
        let result = try await store.apply(page([.upsert(makePost("gone")), .delete("gone"),
                                                 .delete("back"), .upsert(makePost("back", text: "first")),
                                                 .upsert(makePost("back", text: "second"))], cursor: "1"),
                                           videos: [], under: testLease("home"))

        #expect(result.inserted == 2 && result.updated == 1 && result.deleted == 1)
        #expect(try sqlite("SELECT id, text FROM posts") == "back|second")

        // The same page encoded ahead of time by prepare(_:) is written the same way.
        let prepared = store.prepare(page([.upsert(makePost("gone")), .delete("gone"), .delete("back"),
                                           .upsert(makePost("back", text: "first")), .upsert(makePost("back", text: "second"))],
                                          cursor: "1"))
        let again = try await store.apply(prepared, videos: [], under: testLease("other"), announcing: nil)
        #expect(again.inserted == 2 && again.updated == 1 && again.deleted == 1)
        #expect(try sqlite("SELECT id, text FROM posts WHERE feed = 'other'") == "back|second")
    }

    @Test func emptyAndNonASCIITextRoundTripAcrossPages() async throws {
        let store = try await makeStore()
        // Text is bound in place from a per-page buffer: a later page must not see an earlier one's bytes.
        let first = Post(id: "p1", author: User(id: "u1", handle: "", displayName: ""), text: "",
                         createdAt: Date(timeIntervalSince1970: 1), html: "", language: "")
        let second = Post(id: "p2", author: User(id: "u2", handle: "zoë", displayName: "Zoë 🚀"), text: "naïve café — 東京 🚀\u{0}end",
                          createdAt: Date(timeIntervalSince1970: 2))
        _ = try await store.apply(page([.upsert(first)], cursor: "1"), videos: [], under: testLease("home"))
        _ = try await store.apply(page([.upsert(second)], cursor: "2"), videos: [], under: testLease("home"))

        let stored = try await store.posts(matching: PostQuery(feed: "home")).map(\.post)
        #expect(Set(stored.map(\.id)) == ["p1", "p2"])
        #expect(stored.first { $0.id == "p1" } == first)
        #expect(stored.first { $0.id == "p2" } == second)
        #expect(try sqlite("SELECT typeof(text), length(text) FROM posts WHERE id = 'p1'") == "text|0")
    }

    @Test func aFailedPageRollsBackEverythingIncludingTheCursor() async throws {
        let store = try await makeStore()
        _ = try await store.apply(page([.upsert(makePost("p1"))], cursor: "1"), videos: [], under: testLease("home"))
        // A trigger makes the second post's insert fail mid-page, as a full disk would.
        _ = try sqlite("CREATE TRIGGER boom BEFORE INSERT ON posts WHEN NEW.id = 'p3' BEGIN SELECT RAISE(ABORT, 'boom'); END;")

        await #expect(throws: ServiceError.self) {
            _ = try await store.apply(page([.upsert(makePost("p2")), .upsert(makePost("p3"))], cursor: "3"), videos: [], under: testLease("home"))
        }

        #expect(try sqlite("SELECT id FROM posts ORDER BY id") == "p1")
        #expect(try await store.cursor(ofFeed: "home")?.position == "1")
    }

    @Test func pagesCommittedTogetherAreWrittenInOrderEachWithWhatItDid() async throws {
        let store = try await makeStore()
        let video = Video(id: "v1", title: "One", duration: 1, streamURL: URL(string: "https://x/1")!)
        let pages = [page([.upsert(makePost("p1", text: "apricot jam")), .upsert(makePost("p2", text: "quince paste"))], cursor: "1"),
                     page([.upsert(makePost("p1", text: "bramble jelly")), .delete("p2"), .upsert(makePost("p3", text: "apricot tart", videos: ["v1"]))],
                          cursor: "2"),
                     page([.upsert(makePost("p4", text: "apricot fool"))], cursor: "3")]

        let results = try await store.apply(pages.map { (page: store.prepare($0), videos: $0.nextCursor?.position == "2" ? [video] : []) },
                                            under: testLease("home"), announcing: nil)

        #expect(results.map { [$0.inserted, $0.updated, $0.deleted] } == [[2, 0, 0], [1, 1, 1], [1, 0, 0]])
        #expect(try sqlite("SELECT id FROM posts ORDER BY id") == "p1\np3\np4")
        #expect(try await store.cursor(ofFeed: "home")?.position == "3")
        #expect(try sqlite("SELECT title FROM videos WHERE id = 'v1'") == "One")
        #expect(try sqlite("INSERT INTO posts_fts(posts_fts, rank) VALUES('integrity-check', 1); SELECT 'ok'") == "ok")
        #expect(try await store.search(SearchQuery(text: "apricot")).map(\.stored.post.id).sorted() == ["p3", "p4"])
        #expect(try await store.search(SearchQuery(text: "quince")).isEmpty)
    }

    /// A page's new posts are linked to their videos and counted in their feed's change counter by
    /// the store, one statement each (migration 028 took both out of per-row triggers, whose
    /// statement journals cost a quarter of SQLite's time for a post): the same links and the
    /// same count as the triggers made, including for a post its own group changes again.
    @Test func newPostsAreLinkedAndCountedAsTheTriggersDid() async throws {
        let store = try await makeStore()
        let pages = [page([.upsert(makePost("p1", videos: ["v1", "v2"])), .upsert(makePost("p2")), .upsert(makePost("p3", videos: ["v2", "v2"]))],
                          cursor: "1"),
                     // p3 changes its videos and p1 goes, both before the page's own new post is linked.
                     page([.upsert(makePost("p3", text: "edited", videos: ["v3"])), .delete("p1"), .upsert(makePost("p4", videos: ["v1"]))],
                          cursor: "2")]
        _ = try await store.apply(pages.map { (page: store.prepare($0), videos: []) }, under: testLease("home"), announcing: nil)
        _ = try await store.apply(page([.upsert(makePost("q1", videos: ["v1"]))], cursor: "1"), videos: [], under: testLease("away"))

        #expect(try sqlite("""
            SELECT p.feed || ' ' || p.id || ' ' || l.position || ' ' || v.id FROM post_videos l
            JOIN posts p ON p.pk = l.post_pk JOIN videos v ON v.pk = l.video_pk ORDER BY p.feed, p.id, l.position
            """) == "away q1 0 v1\nhome p3 0 v3\nhome p4 0 v1")
        // home: four posts and three videos inserted, one post changed, one deleted; away: one of each inserted.
        #expect(try sqlite("SELECT feed || ' ' || version FROM feed_versions ORDER BY feed") == "away 2\nhome 9")
        #expect(try sqlite("INSERT INTO posts_fts(posts_fts, rank) VALUES('integrity-check', 1); SELECT 'ok'") == "ok")
        #expect(try await store.search(SearchQuery(text: "edited")).map(\.stored.post.id) == ["p3"])
    }

    @Test func aFailedPageFailsThePagesCommittedWithItAndKeepsThoseBefore() async throws {
        let store = try await makeStore()
        _ = try await store.apply(page([.upsert(makePost("p1"))], cursor: "1"), videos: [], under: testLease("home"))
        _ = try sqlite("CREATE TRIGGER boom BEFORE INSERT ON posts WHEN NEW.id = 'p3' BEGIN SELECT RAISE(ABORT, 'boom'); END;")
        let pages = [page([.upsert(makePost("p2"))], cursor: "2"), page([.upsert(makePost("p3"))], cursor: "3")]

        await #expect(throws: ServiceError.self) {
            _ = try await store.apply(pages.map { (page: store.prepare($0), videos: []) }, under: testLease("home"), announcing: nil)
        }

        #expect(try sqlite("SELECT id FROM posts ORDER BY id") == "p1", "page 2 went with page 3")
        #expect(try await store.cursor(ofFeed: "home")?.position == "1")
    }

    @Test func unresolvedVideosAreListedUntilResolved() async throws {
        let store = try await makeStore()
        _ = try await store.apply(page([.upsert(makePost("p1", videos: ["v1", "v2"]))], cursor: "1"), videos: [], under: testLease("home"))
        #expect(try await store.unresolvedVideoIDs(inFeed: "home", limit: 10) == ["v1", "v2"])
        #expect(try await store.videosToResolve(among: ["v1", "v2"], inFeed: "home") == ["v1", "v2"])

        let written = try await store.saveVideos([Video(id: "v2", title: "Two", duration: 2, streamURL: URL(string: "https://x/2")!)], under: home)

        #expect(written == 1)
        #expect(try await store.unresolvedVideoIDs(inFeed: "home", limit: 10) == ["v1"])
        #expect(try await store.videosToResolve(among: ["v1", "v2"], inFeed: "home") == ["v1"])
        #expect(try await store.posts(matching: PostQuery()).first?.videos.map(\.title) == ["Two"])
    }

    @Test func sessionsAndSyncOutcomesRoundTrip() async throws {
        let store = try await makeStore()
        let expiry = Date(timeIntervalSince1970: 1_900_000_000)
        let account = AccountKey(integration: "httpapi", server: "https://api.example", account: "ada")
        try await store.saveSession(Session(accessToken: Secret("a"), refreshToken: Secret("r"), expiresAt: expiry), of: account)
        let session = try await store.session(of: account)
        #expect(try await store.session(of: AccountKey(integration: "httpapi", server: "https://api.example", account: "bob")) == nil)
        #expect(session?.accessToken.revealed == "a" && session?.refreshToken?.revealed == "r" && session?.expiresAt == expiry)

        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        try await store.recordSync(SyncOutcome(startedAt: t0, finishedAt: t0 + 1), under: home)
        try await store.recordSync(SyncOutcome(startedAt: t0 + 5, finishedAt: t0 + 6, error: "server down"), under: home)
        let status = try await store.feedStatuses()
        #expect(status.map(\.feed) == ["home"])
        #expect(status.first?.lastSuccessAt == t0 + 1 && status.first?.lastError == "server down")
        #expect(try sqlite("SELECT COUNT(*) FROM sync_runs") == "2")
    }

    @Test func authorsKeepTheProfileOfTheirNewestPostWhateverOrderPagesCommitIn() async throws {
        let store = try await makeStore()
        func post(_ id: String, at seconds: Double, avatar: String) -> Post {
            Post(id: PostID(id), author: User(id: "u1", handle: "ada", displayName: "Ada", avatarURL: URL(string: "https://a.example/\(avatar).png")),
                 text: id, createdAt: Date(timeIntervalSince1970: seconds))
        }
        // A backfill: newest page first, the avatar changed in between.
        let newest = FeedPage(changes: [.upsert(post("p3", at: 3_000, avatar: "new")), .upsert(post("p2", at: 2_000, avatar: "new"))],
                              nextCursor: FeedCursor(position: "a"), hasMore: true)
        let oldest = FeedPage(changes: [.upsert(post("p1", at: 1_000, avatar: "missing"))], nextCursor: FeedCursor(position: "b"), hasMore: false)
        _ = try await store.apply(newest, videos: [], under: testLease("home"))
        _ = try await store.apply(oldest, videos: [], under: testLease("home"))
        #expect(try sqlite("SELECT avatar_url FROM users") == "https://a.example/new.png")

        // The same walk again, as a --full of an unchanged feed would, writes no row but the cursor's.
        let again = try await store.apply(newest, videos: [], under: testLease("home"))
        let againOld = try await store.apply(oldest, videos: [], under: testLease("home"))
        #expect(again.rowsWritten == 1 && againOld.rowsWritten == 1, "\(again.rowsWritten) \(againOld.rowsWritten)")

        // A newer post brings a newer profile in.
        let later = FeedPage(changes: [.upsert(post("p4", at: 4_000, avatar: "newest"))], nextCursor: FeedCursor(position: "c"), hasMore: false)
        _ = try await store.apply(later, videos: [], under: testLease("home"))
        #expect(try sqlite("SELECT avatar_url FROM users") == "https://a.example/newest.png")
    }

    @Test func theSearchIndexFollowsInsertsEditsAndDeletionsWithinOnePage() async throws {
        let store = try await makeStore()
        let changes: [FeedChange] = [.upsert(makePost("p1", text: "apricot jam")), .upsert(makePost("p2", text: "quince paste")),
                                     .upsert(makePost("p1", text: "bramble jelly")), .delete("p2"), .upsert(makePost("p3", text: "apricot tart"))]
        _ = try await store.apply(page(changes, cursor: "1"), videos: [], under: testLease("home"))

        #expect(try sqlite("INSERT INTO posts_fts(posts_fts, rank) VALUES('integrity-check', 1); SELECT 'ok'") == "ok")
        #expect(try await store.search(SearchQuery(text: "apricot")).map(\.stored.post.id) == ["p3"])
        #expect(try await store.search(SearchQuery(text: "bramble")).map(\.stored.post.id) == ["p1"])
        #expect(try await store.search(SearchQuery(text: "quince")).isEmpty)
    }

    @Test func feedsAreSeparateNamespaces() async throws {
        let store = try await makeStore()
        _ = try await store.apply(page([.upsert(makePost("p1", text: "home"))], cursor: "1"), videos: [], under: testLease("home"))
        _ = try await store.apply(page([.upsert(makePost("p1", text: "work"))], cursor: "1"), videos: [], under: testLease("work"))

        #expect(try await store.posts(matching: PostQuery(feed: "work")).map(\.post.text) == ["work"])
        #expect(try await store.setRead(true, postID: "p1", inFeed: nil) == ["home", "work"], "ambiguous: nothing marked")
        #expect(try await store.posts(matching: PostQuery(unreadOnly: true)).count == 2)
    }
}

extension SQLiteFeedStore {
    /// Takes the lease on a feed (every feed's lease is the one write lock); returns whom it took over from.
    func take(_ holder: String, wait: TimeInterval) async throws -> String? {
        try await acquireLease(onFeed: "home", holder: holder, wait: wait, onlyIfDue: false)?.tookOverFrom
    }

    func letGo() { release(FeedLease(feed: "home", token: "")) }
}

/// The write lock between processes (here, two store actors with their own open files).
@Suite struct StoreLockTests {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString).sqlite").path

    @Test func aSecondHolderWaitsThenGivesUpNamingTheFirst() async throws {
        let first = SQLiteFeedStore(path: path), second = SQLiteFeedStore(path: path)
        #expect(try await first.take("feedsyncd", wait: 0) == nil)
        #expect(try FileManager.default.attributesOfItem(atPath: path + ".lock")[.posixPermissions] as? Int == 0o600)

        let error = await #expect(throws: ServiceError.self) { try await second.take("feedsync pull", wait: 0.3) }

        #expect(error?.code == .locked)
        #expect(error?.reason.contains("pid \(getpid()) (feedsyncd) holds it") == true)
        await first.letGo()
        #expect(try await second.take("feedsync pull", wait: 0) == nil)
        await second.letGo()
    }

    @Test func holdsWithinOneProcessAreCountedAndTheLastReleaseLetsGo() async throws {
        let store = SQLiteFeedStore(path: path), other = SQLiteFeedStore(path: path)
        _ = try await store.take("a", wait: 0)
        _ = try await store.take("b", wait: 0)
        await store.letGo()
        await #expect(throws: ServiceError.self) { try await other.take("c", wait: 0) }
        await store.letGo()
        _ = try await other.take("c", wait: 0)
        await other.letGo()
    }

    @Test func aLockLeftByADeadProcessIsTakenOverAndReported() async throws {
        // What a holder killed with SIGKILL leaves: its record, but no flock (the kernel dropped it).
        try Data("pid=999999 holder=feedsync_pull since=2026-01-01T00:00:00Z\n".utf8).write(to: URL(fileURLWithPath: path + ".lock"))
        let store = SQLiteFeedStore(path: path)

        let lease = try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false)
        #expect(lease?.tookOverFrom == "process 999999")
        if let lease { await store.release(lease) }
        #expect(try !String(contentsOfFile: path + ".lock", encoding: .utf8).contains("pid="), "a clean release leaves no holder")
    }

    @Test func aDaemonIsRecordedWhileItRunsAndASecondIsRefused() async throws {
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        let daemon = try await store.join(startedAt: Date(timeIntervalSince1970: 1_800_000_000))
        try await store.beat(daemon)
        #expect(try await store.daemons().map(\.id) == [daemon.id])
        #expect(try await store.daemons().first?.startedAt == daemon.startedAt)
        let second = SQLiteFeedStore(path: path)
        try await second.open()
        let error = await #expect(throws: ServiceError.self) { _ = try await second.join(startedAt: Date()) }
        #expect(error?.code == .locked)
        await store.leave(daemon)
        #expect(try await store.daemons().isEmpty)
    }

    @Test func consecutiveFailuresCountUpAndASuccessResetsThem() async throws {
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        for _ in 0..<3 { try await store.recordSync(SyncOutcome(startedAt: t, finishedAt: t, error: "down"), under: home) }
        try await store.setNextAttempt(t + 60, ofFeed: "home")
        #expect(try await store.feedStatuses().first?.consecutiveFailures == 3)
        #expect(try await store.feedStatuses().first?.nextAttemptAt == t + 60)
        try await store.recordSync(SyncOutcome(startedAt: t, finishedAt: t), under: home)
        #expect(try await store.feedStatuses().first?.consecutiveFailures == 0)
    }
}

@Suite struct StoreSafetyTests {
    let folder: URL
    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("safety-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    @Test func valuesThatLookLikeSQLAreStoredAsTheyAre() async throws {
        let store = SQLiteFeedStore(path: folder.appendingPathComponent("s.sqlite").path)
        try await store.open()
        let hostile = "x'); DROP TABLE posts; --"
        let post = Post(id: PostID(hostile), author: User(id: UserID("u'1"), handle: "o'brien", displayName: "\"; DELETE FROM users; --"),
                        text: "Robert'); DROP TABLE posts;--", createdAt: Date(timeIntervalSince1970: 1), videoIDs: [VideoID("v\"1")])
        let feed = "f'eed"
        _ = try await store.apply(FeedPage(changes: [.upsert(post)], nextCursor: FeedCursor(position: "1' OR '1'='1"), hasMore: false),
                                  videos: [], under: testLease(feed))

        let stored = try await store.posts(matching: PostQuery(feed: feed))
        #expect(stored.map(\.post) == [post])
        #expect(try await store.cursor(ofFeed: feed)?.position == "1' OR '1'='1")
        #expect(try await store.setRead(true, postID: PostID(hostile), inFeed: feed) == [feed])
    }

    @Test func theDatabaseAndItsWALFilesArePrivate() async throws {
        let path = folder.appendingPathComponent("p.sqlite").path
        let store = SQLiteFeedStore(path: path)
        try await store.open()
        try await store.saveSession(Session(accessToken: Secret("t")), of: AccountKey(integration: "httpapi", server: "s", account: "a"))
        for file in [path, path + "-wal", path + "-shm", path + ".sessions.sqlite"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file) has mode \(String(mode ?? 0, radix: 8))")
        }
    }
}

@Suite struct RichPostTests {
    @Test func htmlWarningsLanguageVisibilityRepostsAndAttachmentsRoundTripAndChangesAreDetected() async throws {
        let store = SQLiteFeedStore(path: FileManager.default.temporaryDirectory.appendingPathComponent("rich-\(UUID().uuidString).sqlite").path)
        try await store.open()
        let booster = User(id: "b1", handle: "bob@example.social", displayName: "Bob")
        var post = Post(id: "109", author: User(id: "a1", handle: "ada", displayName: "Ada"), text: "Hello world",
                        createdAt: Date(timeIntervalSince1970: 1_700_000_000), videoIDs: ["m1"], html: "<p>Hello <b>world</b></p>",
                        contentWarning: "spoilers", language: "en", visibility: .followersOnly,
                        repost: Post.Repost(by: booster, originalID: "42"),
                        attachments: [Post.Attachment(kind: "image", url: URL(string: "https://x/i.png")!,
                                                      previewURL: URL(string: "https://x/s.png")!, description: "a cat")])
        let video = Video(id: "m1", title: "clip", duration: 3.5, streamURL: URL(string: "https://x/v.mp4")!, width: 640, height: 360,
                          framesPerSecond: 29.97)
        let page = { (post: Post) in FeedPage(changes: [.upsert(post)], nextCursor: FeedCursor(position: "c"), hasMore: false) }

        _ = try await store.apply(page(post), videos: [video], under: testLease("m"))
        let stored = try await store.posts(matching: PostQuery(feed: "m"))
        #expect(stored.first?.post == post)
        #expect(stored.first?.videos == [video])

        #expect(try await store.apply(page(post), videos: [], under: testLease("m")).unchanged == 1)
        post.contentWarning = nil
        #expect(try await store.apply(page(post), videos: [], under: testLease("m")).updated == 1)
    }
}
