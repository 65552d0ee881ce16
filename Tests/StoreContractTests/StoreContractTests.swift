import Core
import Foundation
import ProcessTestSupport
@testable import PostgresStore
import PostgresTestSupport
import SQLiteCache
import Synchronization
import Testing

/// What every store promises, whatever engine is underneath: each check runs in the SQLite
/// suite and in the PostgreSQL suite below, so a machine without PostgreSQL shows those skipped.
enum StoreContract {
    static func aWithheldSweepShowsInStatusUntilAWalkSweeps(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        func record(walkedToSweep: Bool, withheld: String?) async throws -> String? {
            var report = SyncReport(feed: "home")
            report.walkedToSweep = walkedToSweep
            report.sweepWithheld = withheld
            try await underLease(store) { lease in
                try await store.recordSync(SyncOutcome(startedAt: Date(), finishedAt: Date(), report: report), under: lease)
            }
            return try await store.feedStatuses().first { $0.feed == "home" }?.sweepWithheld
        }
        #expect(try await record(walkedToSweep: true, withheld: "nothing was deleted as gone") == "nothing was deleted as gone")
        #expect(try await record(walkedToSweep: false, withheld: nil) == "nothing was deleted as gone", "a sync that does not sweep says nothing of sweeps")
        #expect(try await record(walkedToSweep: true, withheld: nil) == nil, "a walk that swept clears it")
    }

    static func aPageCommitsPostsAndCursorAndRewritesOnlyWhatChanged(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        let first = try await store.commit(makePage([.upsert(makePost("p1")), .upsert(makePost("p2", at: 1_700_000_100))], cursor: "2"))
        #expect(first.inserted == 2)
        #expect(try await store.cursor(ofFeed: "home") == FeedCursor(position: "2"))

        let second = try await store.commit(makePage([.upsert(makePost("p1")), .upsert(makePost("p2", text: "edited", at: 1_700_000_100)),
                                                     .delete("p3")], cursor: "3"))
        #expect(second.inserted == 0 && second.updated == 1 && second.unchanged == 1 && second.deleted == 0)

        let posts = try await store.posts(matching: PostQuery(feed: "home"))
        #expect(posts.map(\.post.id) == ["p2", "p1"])
        #expect(posts.first?.post.text == "edited" && posts.first?.post.author.handle == "ada")
        #expect(try await store.feedStatuses().first?.postCount == 2)
        #expect(first.insertedIDs == ["p1", "p2"] && first.updatedIDs.isEmpty && first.deletedIDs.isEmpty)
        #expect(second.insertedIDs.isEmpty && second.updatedIDs == ["p2"] && second.deletedIDs.isEmpty, "p3 was never stored")

        let third = try await store.commit(makePage([.delete("p1"), .upsert(makePost("p4", at: 1_700_000_200))], cursor: "4"))
        #expect(third.insertedIDs == ["p4"] && third.updatedIDs.isEmpty && third.deletedIDs == ["p1"])
    }

    static func aFullWalkFromAnyConnectionDeletesOnlyWhatItDidNotSee(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let page = makePage(["p1", "p2", "p3"].map { .upsert(makePost($0)) }, cursor: "3")
        _ = try await store.commit(page)
        var walk = FullWalk(feed: "home")
        walk.note(makePage([.upsert(makePost("p1"))], cursor: "1"))

        #expect(try await other.unseenPosts(of: walk) == (unseen: 2, cached: 3))
        #expect(try await underLease(other) { lease in try await other.deleteUnseenPosts(of: walk, under: lease) } == 2)
        #expect(try await store.posts(matching: PostQuery(feed: "home")).map(\.post.id) == ["p1"])
    }

    static func aSessionBelongsToItsAccountAndEveryProcessReadsTheLatest(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let ada = AccountKey(integration: "httpapi", server: "https://api.example", account: "ada")
        let bob = AccountKey(integration: "httpapi", server: "https://api.example", account: "bob")
        let first = Session(accessToken: Secret("a"), refreshToken: Secret("r"), expiresAt: Date(timeIntervalSince1970: 1_800_000_000))
        let second = Session(accessToken: Secret("a2"), refreshToken: nil, expiresAt: nil)
        try await store.saveSession(first, of: ada)
        #expect(try await other.session(of: ada) == first)
        #expect(try await other.session(of: bob) == nil)
        try await other.saveSession(second, of: ada)
        #expect(try await store.session(of: ada) == second)
    }

    static func aPostgreSQLStoreHandsEachFeedItsSessionFromBeforeAccountsOnce() async throws {
        let (any, _) = try await makeStores(.postgres)
        let store = try #require(any as? PostgresFeedStore)
        try await store.run("keeping a session as an older version did", """
            INSERT INTO feedsync_private.sessions (feed, backend, access_token, refresh_token, expires_at)
            VALUES ('home', 'httpapi https://api.example user ada', 'OLD-ACCESS', 'OLD-REFRESH', 1900000000000),
                   ('news', 'httpapi https://api.example user bob', 'OLD-ACCESS-2', NULL, NULL)
            """)

        let home = try await store.takeFormerSession(ofFeed: "home", backend: "httpapi https://api.example user ada")
        let news = try await store.takeFormerSession(ofFeed: "news", backend: "httpapi https://api.example user ada")

        #expect(home == Session(accessToken: Secret("OLD-ACCESS"), refreshToken: Secret("OLD-REFRESH"),
                                expiresAt: Date(timeIntervalSince1970: 1_900_000_000)))
        #expect(news == nil, "another backend's session is not handed over")
        #expect(try await store.takeFormerSession(ofFeed: "home", backend: "httpapi https://api.example user ada") == nil)
        #expect(try await store.run("counting", "SELECT count(*) FROM feedsync_private.sessions").first?.first == "0")
    }

    static func aSessionLockKeepsOtherProcessesOutUntilReleased(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let ada = AccountKey(integration: "bluesky", server: "https://pds.example", account: "ada.example")
        let lock = try await store.lockSession(of: ada, wait: 0)
        let error = await #expect(throws: ServiceError.self) { _ = try await other.lockSession(of: ada, wait: 0.3) }
        #expect(error?.code == .locked)
        await store.unlockSession(lock)
        let taken = try await other.lockSession(of: ada, wait: 0)
        await other.unlockSession(taken)
    }

    static func aSessionLockIsOneHolderAtATimeWithinAProcessToo(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        let ada = AccountKey(integration: "httpapi", server: "https://api.example", account: "ada")
        let bob = AccountKey(integration: "httpapi", server: "https://api.example", account: "bob")
        let lock = try await store.lockSession(of: ada, wait: 0)
        let bobs = try await store.lockSession(of: bob, wait: 0)
        let taken = Mutex(false)
        let second = Task {
            let held = try await store.lockSession(of: ada, wait: 0)
            taken.withLock { $0 = true }
            return held
        }
        // Held in this process: the second caller waits, however short its wait for other processes.
        try await Task.sleep(for: .milliseconds(300))
        #expect(!taken.withLock { $0 }, "a second holder of one account in one process")
        await store.unlockSession(lock)
        await store.unlockSession(try await second.value)
        #expect(taken.withLock { $0 })
        await store.unlockSession(bobs)
    }

    static func aPurgeForgetsOneFeedAndWaitsForItsWriter(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind, busyMilliseconds: 300)
        _ = try await store.commit(makePage([.upsert(makePost("p1")), .upsert(makePost("p2"))], cursor: "2"), toFeed: "gone")
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "1"), toFeed: "kept")
        _ = try await store.setRead(true, postID: "p1", inFeed: "gone")
        let live = store
        try await live.setLiveState("connected", ofFeed: "gone")

        // A sync of the feed elsewhere holds its lease: the purge refuses rather than race its page.
        let lease = try #require(try await store.acquireLease(onFeed: "gone", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        let error = await #expect(throws: ServiceError.self) { _ = try await other.purge(feed: "gone") }
        #expect(error?.code == .locked)
        #expect(try await other.feedStatuses().first { $0.feed == "gone" }?.postCount == 2)
        await store.release(lease)

        #expect(try await other.purge(feed: "gone") == 2)
        #expect(try await other.feedStatuses().map(\.feed) == ["kept"])
        #expect(try await other.cursor(ofFeed: "gone") == nil)
        #expect(try await live.liveStates()["gone"] == nil)
        #expect(try await other.posts(matching: PostQuery()).map(\.feed) == ["kept"])
        #expect(try await other.purge(feed: "never") == 0)
    }

    static func aLeaseKeepsOtherProcessesOutUntilReleased(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let lease = try #require(try await store.acquireLease(onFeed: "home", holder: "feedsyncd", wait: 0, onlyIfDue: false))
        let error = await #expect(throws: ServiceError.self) {
            _ = try await other.acquireLease(onFeed: "home", holder: "feedsync pull", wait: 0.3, onlyIfDue: false)
        }
        #expect(error?.code == .locked)
        await store.release(lease)
        let taken = try await other.acquireLease(onFeed: "home", holder: "feedsync pull", wait: 0, onlyIfDue: false)
        #expect(taken != nil)
        if let taken { await other.release(taken) }
    }

    static func searchFindsAWordAndMarksIt(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1", text: "orange marmalade on toast")), .upsert(makePost("p2"))], cursor: "2"))
        let hits = try await store.search(SearchQuery(text: "marmalade"))
        #expect(hits.map(\.stored.post.id) == ["p1"])
        #expect(hits.first?.snippet.contains("\u{E000}marmalade\u{E001}") == true)
    }

    static func aRenamedAuthorIsFoundUnderTheNewNameOnOlderPostsToo(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1", text: "first"))], cursor: "1"))
        var renamed = makePost("p2", text: "second", at: 1_700_000_500)
        renamed.author = User(id: "u1", handle: "lovelace", displayName: "Countess Lovelace")
        let page = try await store.commit(makePage([.upsert(renamed)], cursor: "2"))
        #expect(page.inserted == 1)
        #expect(try await store.search(SearchQuery(text: "lovelace")).map(\.stored.post.id).sorted() == ["p1", "p2"])
        #expect(try await store.search(SearchQuery(text: "ada")).isEmpty, "the old handle and name are gone from every post")
        // An older page carrying the old profile does not bring it back.
        _ = try await store.commit(makePage([.upsert(makePost("p0", text: "zeroth", at: 1_600_000_000))], cursor: "3"))
        #expect(try await store.posts(matching: PostQuery(feed: "home")).allSatisfy { $0.post.author.handle == "lovelace" })
    }

    static func textWithNULsAndLineBreaksIsStoredWithoutFailingThePage(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        var post = makePost("p\u{0}1", text: "tab\there\nnew line \\ back\\u0000slash nul\u{0}end")
        post.author = User(id: "u\u{0}1", handle: "a\u{0}da", displayName: "Ada\r")
        post.labels = ["x\u{0}y"]
        let result = try await store.commit(makePage([.upsert(post)], cursor: "c\u{0}1"))
        #expect(result.inserted == 1)
        let stored = try #require(try await store.posts(matching: PostQuery(feed: "home")).first?.post)
        // SQLite keeps a NUL; PostgreSQL text cannot hold one and keeps U+FFFD in its place.
        let nul = kind == .sqlite ? "\u{0}" : "\u{FFFD}"
        #expect(stored.text == "tab\there\nnew line \\ back\\u0000slash nul\(nul)end")
        #expect(stored.author.handle == "a\(nul)da" && stored.author.displayName == "Ada\r")
        #expect(stored.labels == ["x\(nul)y"])
    }

    static func aDaemonIsListedWhileItRunsAndGoneWhenItLeaves(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let daemon = try await store.join(startedAt: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(try await other.daemons().map(\.id) == [daemon.id])
        await store.leave(daemon)
        #expect(try await other.daemons().isEmpty)
    }

    static func readMarksSurviveResyncs(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1"))], cursor: "1"))
        #expect(try await store.setRead(true, postID: "p1", inFeed: nil) == ["home"])
        _ = try await store.commit(makePage([.upsert(makePost("p1", text: "edited"))], cursor: "2"))
        #expect(try await store.posts(matching: PostQuery(unreadOnly: true)).isEmpty)
    }

    /// A daemon that stops clears the next attempts it recorded.
    static func aStoppingDaemonClearsItsSchedule(_ kind: StoreKind) async throws {
        let (store, other) = try await makeStores(kind)
        let daemon = try await store.join(startedAt: Date())
        try await store.setNextAttempt(Date(timeIntervalSince1970: 1_900_000_000), ofFeed: "home")
        try await store.setNextAttempt(Date(timeIntervalSince1970: 1_900_000_000), ofFeed: "away")
        #expect(try await other.feedStatuses().compactMap(\.nextAttemptAt).count == 2)
        try await store.unschedule(["home", "away"])
        #expect(try await other.feedStatuses().allSatisfy { $0.nextAttemptAt == nil })
        await store.leave(daemon)
    }

    // MARK: Where the stores once disagreed

    /// Posts created at the same instant are listed by feed, then id, ascending: the order of
    /// an export's ties too.
    static func tiesAreOrderedByFeedThenID(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p2")), .upsert(makePost("p1")), .upsert(makePost("p3"))], cursor: "1"),
                                   toFeed: "b")
        _ = try await store.commit(makePage([.upsert(makePost("p2")), .upsert(makePost("p9", at: 1_600_000_000))], cursor: "1"),
                                   toFeed: "a")
        let listed = try await store.posts(matching: PostQuery()).map { "\($0.feed)/\($0.post.id)" }
        #expect(listed == ["a/p2", "b/p1", "b/p2", "b/p3", "a/p9"])
        let stable = try await store.posts(matching: PostQuery(feed: "b", stable: true)).map(\.post.id)
        #expect(stable == ["p1", "p2", "p3"])
    }

    /// `unreadOnly` holds in the stable walk an export reads, as in the newest-first list.
    static func unreadOnlyHoldsInTheStableWalk(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("p1")), .upsert(makePost("p2", at: 1_700_000_100))], cursor: "2"))
        #expect(try await store.setRead(true, postID: "p2", inFeed: "home") == ["home"])
        #expect(try await store.posts(matching: PostQuery(feed: "home", unreadOnly: true, stable: true)).map(\.post.id) == ["p1"])
        #expect(try await store.posts(matching: PostQuery(feed: "home", unreadOnly: true)).map(\.post.id) == ["p1"])
    }

    /// A post whose author has no stored profile shows the author's id as handle and name,
    /// never an empty handle.
    static func anAuthorWithoutAProfileShowsTheirID(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        var post = makePost("p1")
        post.author = User(id: "u7", handle: "grace", displayName: "Grace")
        _ = try await store.commit(makePage([.upsert(post)], cursor: "1"))
        try await forgetProfiles(kind, store)
        let author = try #require(try await store.posts(matching: PostQuery(feed: "home")).first?.post.author)
        #expect(author.id == "u7" && author.handle == "u7" && author.displayName == "u7")
    }

    /// `rank`: smaller is better, and hits come best first. A post that uses the word more
    /// often ranks better. (The number's scale is each store's own.)
    static func searchRanksSmallerIsBetter(_ kind: StoreKind) async throws {
        let (store, _) = try await makeStores(kind)
        _ = try await store.commit(makePage([.upsert(makePost("once", text: "sourdough and other breads and rolls and cakes")),
                                             .upsert(makePost("often", text: "sourdough sourdough sourdough")),
                                             .upsert(makePost("none", text: "rye"))], cursor: "3"))
        let hits = try await store.search(SearchQuery(text: "sourdough"))
        #expect(hits.map(\.stored.post.id) == ["often", "once"])
        #expect(hits.count == 2 && hits[0].rank < hits[1].rank, "ranks \(hits.map(\.rank))")
    }

    /// Drops the users rows, as a mirror written before profiles were kept would hold its posts.
    private static func forgetProfiles(_ kind: StoreKind, _ store: any FeedStore) async throws {
        switch kind {
        case .postgres:
            let store = try #require(store as? PostgresFeedStore)
            try await store.run("forgetting profiles", "UPDATE posts SET author_pk = NULL, repost_by_pk = NULL")
            try await store.run("forgetting profiles", "DELETE FROM users")
        case .sqlite:
            let store = try #require(store as? SQLiteFeedStore)
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            python.arguments = ["python3", "-c", """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("UPDATE posts SET author_pk = NULL, repost_by_pk = NULL")
                db.execute("DELETE FROM users")
                db.commit()
                """, store.path]
            try launch(python)
            python.waitUntilExit()
            #expect(python.terminationStatus == 0)
        }
    }
}

/// The contract on a SQLite file.
@Suite struct SQLiteStoreContractTests {
    @Test func aPageCommitsPostsAndCursorAndRewritesOnlyWhatChanged() async throws { try await StoreContract.aPageCommitsPostsAndCursorAndRewritesOnlyWhatChanged(.sqlite) }
    @Test func aFullWalkFromAnyConnectionDeletesOnlyWhatItDidNotSee() async throws { try await StoreContract.aFullWalkFromAnyConnectionDeletesOnlyWhatItDidNotSee(.sqlite) }
    @Test func aSessionBelongsToItsAccountAndEveryProcessReadsTheLatest() async throws { try await StoreContract.aSessionBelongsToItsAccountAndEveryProcessReadsTheLatest(.sqlite) }
    @Test func aSessionLockKeepsOtherProcessesOutUntilReleased() async throws { try await StoreContract.aSessionLockKeepsOtherProcessesOutUntilReleased(.sqlite) }
    @Test func aSessionLockIsOneHolderAtATimeWithinAProcessToo() async throws { try await StoreContract.aSessionLockIsOneHolderAtATimeWithinAProcessToo(.sqlite) }
    @Test func aPurgeForgetsOneFeedAndWaitsForItsWriter() async throws { try await StoreContract.aPurgeForgetsOneFeedAndWaitsForItsWriter(.sqlite) }
    @Test func aLeaseKeepsOtherProcessesOutUntilReleased() async throws { try await StoreContract.aLeaseKeepsOtherProcessesOutUntilReleased(.sqlite) }
    @Test func searchFindsAWordAndMarksIt() async throws { try await StoreContract.searchFindsAWordAndMarksIt(.sqlite) }
    @Test func aRenamedAuthorIsFoundUnderTheNewNameOnOlderPostsToo() async throws { try await StoreContract.aRenamedAuthorIsFoundUnderTheNewNameOnOlderPostsToo(.sqlite) }
    @Test func textWithNULsAndLineBreaksIsStoredWithoutFailingThePage() async throws { try await StoreContract.textWithNULsAndLineBreaksIsStoredWithoutFailingThePage(.sqlite) }
    @Test func aDaemonIsListedWhileItRunsAndGoneWhenItLeaves() async throws { try await StoreContract.aDaemonIsListedWhileItRunsAndGoneWhenItLeaves(.sqlite) }
    @Test func readMarksSurviveResyncs() async throws { try await StoreContract.readMarksSurviveResyncs(.sqlite) }
    @Test func aStoppingDaemonClearsItsSchedule() async throws { try await StoreContract.aStoppingDaemonClearsItsSchedule(.sqlite) }
    @Test func tiesAreOrderedByFeedThenID() async throws { try await StoreContract.tiesAreOrderedByFeedThenID(.sqlite) }
    @Test func unreadOnlyHoldsInTheStableWalk() async throws { try await StoreContract.unreadOnlyHoldsInTheStableWalk(.sqlite) }
    @Test func anAuthorWithoutAProfileShowsTheirID() async throws { try await StoreContract.anAuthorWithoutAProfileShowsTheirID(.sqlite) }
    @Test func searchRanksSmallerIsBetter() async throws { try await StoreContract.searchRanksSmallerIsBetter(.sqlite) }
    @Test func aWithheldSweepShowsInStatusUntilAWalkSweeps() async throws { try await StoreContract.aWithheldSweepShowsInStatusUntilAWalkSweeps(.sqlite) }
}

/// The contract on the tests' PostgreSQL server; skipped where none can be started.
@Suite(.needsPostgres) struct PostgresStoreContractTests {
    @Test func aPageCommitsPostsAndCursorAndRewritesOnlyWhatChanged() async throws { try await StoreContract.aPageCommitsPostsAndCursorAndRewritesOnlyWhatChanged(.postgres) }
    @Test func aFullWalkFromAnyConnectionDeletesOnlyWhatItDidNotSee() async throws { try await StoreContract.aFullWalkFromAnyConnectionDeletesOnlyWhatItDidNotSee(.postgres) }
    @Test func aSessionBelongsToItsAccountAndEveryProcessReadsTheLatest() async throws { try await StoreContract.aSessionBelongsToItsAccountAndEveryProcessReadsTheLatest(.postgres) }
    @Test func aSessionLockKeepsOtherProcessesOutUntilReleased() async throws { try await StoreContract.aSessionLockKeepsOtherProcessesOutUntilReleased(.postgres) }
    @Test func aSessionLockIsOneHolderAtATimeWithinAProcessToo() async throws { try await StoreContract.aSessionLockIsOneHolderAtATimeWithinAProcessToo(.postgres) }
    @Test func aPostgreSQLStoreHandsEachFeedItsSessionFromBeforeAccountsOnce() async throws { try await StoreContract.aPostgreSQLStoreHandsEachFeedItsSessionFromBeforeAccountsOnce() }
    @Test func aPurgeForgetsOneFeedAndWaitsForItsWriter() async throws { try await StoreContract.aPurgeForgetsOneFeedAndWaitsForItsWriter(.postgres) }
    @Test func aLeaseKeepsOtherProcessesOutUntilReleased() async throws { try await StoreContract.aLeaseKeepsOtherProcessesOutUntilReleased(.postgres) }
    @Test func searchFindsAWordAndMarksIt() async throws { try await StoreContract.searchFindsAWordAndMarksIt(.postgres) }
    @Test func aRenamedAuthorIsFoundUnderTheNewNameOnOlderPostsToo() async throws { try await StoreContract.aRenamedAuthorIsFoundUnderTheNewNameOnOlderPostsToo(.postgres) }
    @Test func textWithNULsAndLineBreaksIsStoredWithoutFailingThePage() async throws { try await StoreContract.textWithNULsAndLineBreaksIsStoredWithoutFailingThePage(.postgres) }
    @Test func aDaemonIsListedWhileItRunsAndGoneWhenItLeaves() async throws { try await StoreContract.aDaemonIsListedWhileItRunsAndGoneWhenItLeaves(.postgres) }
    @Test func readMarksSurviveResyncs() async throws { try await StoreContract.readMarksSurviveResyncs(.postgres) }
    @Test func aStoppingDaemonClearsItsSchedule() async throws { try await StoreContract.aStoppingDaemonClearsItsSchedule(.postgres) }
    @Test func tiesAreOrderedByFeedThenID() async throws { try await StoreContract.tiesAreOrderedByFeedThenID(.postgres) }
    @Test func unreadOnlyHoldsInTheStableWalk() async throws { try await StoreContract.unreadOnlyHoldsInTheStableWalk(.postgres) }
    @Test func anAuthorWithoutAProfileShowsTheirID() async throws { try await StoreContract.anAuthorWithoutAProfileShowsTheirID(.postgres) }
    @Test func searchRanksSmallerIsBetter() async throws { try await StoreContract.searchRanksSmallerIsBetter(.postgres) }
    @Test func aWithheldSweepShowsInStatusUntilAWalkSweeps() async throws { try await StoreContract.aWithheldSweepShowsInStatusUntilAWalkSweeps(.postgres) }
}
