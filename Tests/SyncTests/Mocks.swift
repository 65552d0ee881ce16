import Core
import Foundation
import Sync
import Synchronization

/// A call log shared by the mocks, so tests can assert the order of steps across services.
final class CallLog: Sendable {
    private let calls = Mutex<[String]>([])
    func record(_ call: String) { calls.withLock { $0.append(call) } }
    var all: [String] { calls.withLock { $0 } }
    func count(_ prefix: String) -> Int { all.filter { $0.hasPrefix(prefix) }.count }
}

/// Answers logins and refreshes from scripted results, recording each call.
final class MockAuthentication: AuthenticationService {
    let log: CallLog
    let logInResult: Mutex<Result<Session, ServiceError>>
    let refreshResult: Mutex<Result<Session, ServiceError>>

    init(log: CallLog, logIn: Result<Session, ServiceError> = .success(makeSession("login")),
         refresh: Result<Session, ServiceError> = .success(makeSession("refreshed"))) {
        self.log = log
        self.logInResult = Mutex(logIn)
        self.refreshResult = Mutex(refresh)
    }

    func logIn() async throws -> Session {
        log.record("logIn")
        return try logInResult.withLock { $0 }.get()
    }

    func refresh(_ session: Session) async throws -> Session {
        log.record("refresh")
        return try refreshResult.withLock { $0 }.get()
    }
}

/// Serves scripted results in order, recording the cursor and token of each call.
final class MockPosts: PostService {
    let log: CallLog
    private let results: Mutex<[Result<FeedPage, ServiceError>]>
    let tokens = Mutex<[String]>([])
    /// Runs before each fetch answers, given its number (from 1): lets a test hold a fetch.
    let beforeAnswer: (@Sendable (Int) async -> Void)?
    private let fetches = Mutex(0)

    init(log: CallLog, _ results: [Result<FeedPage, ServiceError>], beforeAnswer: (@Sendable (Int) async -> Void)? = nil) {
        self.log = log
        self.results = Mutex(results)
        self.beforeAnswer = beforeAnswer
    }

    func page(after cursor: FeedCursor?, session: Session?) async throws -> FeedPage {
        log.record("page(after: \(cursor?.position ?? "start"))")
        let number = fetches.withLock { $0 += 1; return $0 }
        await beforeAnswer?(number)
        tokens.withLock { $0.append(session?.accessToken.revealed ?? "(no session)") }
        let next: Result<FeedPage, ServiceError> = results.withLock { results in
            results.isEmpty ? .failure(ServiceError(.unavailable, "mock", "no more scripted pages")) : results.removeFirst()
        }
        return try next.get()
    }
}

/// Resolves ids from a fixed set, or fails, recording each lookup.
final class MockVideos: VideoService {
    let log: CallLog
    let known: [VideoID: Video]
    let failure: ServiceError?

    init(log: CallLog, known: [Video] = [], failure: ServiceError? = nil) {
        self.log = log
        self.known = Dictionary(uniqueKeysWithValues: known.map { ($0.id, $0) })
        self.failure = failure
    }

    func videos(withIDs ids: [VideoID]) async throws -> [Video] {
        log.record("videos(\(ids.map(\.rawValue).joined(separator: ",")))")
        if let failure { throw failure }
        return ids.compactMap { known[$0] }
    }
}

/// What a sync's fetcher and committer did by the time each commit began: the fetches begun, by
/// commit number, and how many commits have begun.
final class FetchesSeen: Sendable {
    let byCommit = Mutex<[Int: [String]]>([:])
    let commitsBegun = Mutex(0)

    /// For a fetcher: holds the second fetch until the first commit has begun, so that it
    /// commits page 1 alone (bounded: 600 s, for a busy machine).
    @Sendable func firstCommitAlone(_ fetch: Int) async {
        let deadline = ContinuousClock.now + .seconds(600)
        while fetch == 2 && commitsBegun.withLock({ $0 }) == 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// An in-memory store of the roles a sync uses, that records writes and can be told to fail
/// the n-th page commit.
actor MockStore: SyncStore {
    let log: CallLog
    var storedCursor: FeedCursor?
    /// Each account's session.
    var sessions: [AccountKey: Session] = [:]
    /// The session of the account a feed `home` of backend `""` uses when none is named.
    var storedSession: Session? { sessions[MockStore.feedAccount()] }
    /// Sessions kept per feed by an older version: feed → (backend, session).
    var formerSessions: [String: (String, Session)] = [:]
    /// Session locks held now.
    var sessionLocks = 0
    /// Runs while the session lock is taken: lets a test hold a renewal.
    var onSessionLock: (@Sendable () async -> Void)?
    var posts: [PostID: Post] = [:]
    var videos: [VideoID: Video] = [:]
    var unresolved: Set<VideoID> = []
    var outcomes: [SyncOutcome] = []
    var failCommitNumber: Int?
    /// The stream position and renames committed with the pages.
    var streamPosition: String?
    var renamed: [AuthorRename] = []
    /// Runs at the start of each commit, given its number (from 1): lets a test hold a commit.
    let beforeCommit: (@Sendable (Int) async -> Void)?
    private var commits = 0
    /// How many pages it takes in one commit, as a real store says.
    nonisolated let pagesPerTransaction: Int
    /// The cursors of the pages of each commit, in order.
    var transactions: [[String]] = []

    init(log: CallLog, cursor: FeedCursor? = nil, session: Session? = nil, failCommitNumber: Int? = nil,
         pagesPerTransaction: Int = 1, beforeCommit: (@Sendable (Int) async -> Void)? = nil) {
        self.log = log
        self.pagesPerTransaction = pagesPerTransaction
        self.storedCursor = cursor
        if let session { self.sessions[Self.feedAccount()] = session }
        self.failCommitNumber = failCommitNumber
        self.beforeCommit = beforeCommit
    }

    func cursor(ofFeed feed: String) -> FeedCursor? { storedCursor }
    var storedBackend: String?
    func backend(ofFeed feed: String) -> String? { storedBackend }
    func setBackend(_ backend: String, under lease: FeedLease) {
        log.record("setBackend")
        storedBackend = backend
    }
    /// The account the engine uses for a feed when its backend names none.
    static func feedAccount(backend: String = "", feed: String = "home") -> AccountKey {
        AccountKey(integration: "feed", server: backend, account: feed)
    }
    func session(of account: AccountKey) -> Session? { sessions[account] }
    func saveSession(_ session: Session, of account: AccountKey) {
        log.record("saveSession")
        sessions[account] = session
    }
    func takeFormerSession(ofFeed feed: String, backend: String) -> Session? {
        guard let (issuer, session) = formerSessions.removeValue(forKey: feed) else { return nil }
        return issuer == backend ? session : nil
    }
    func keepFormerSession(_ session: Session, ofFeed feed: String, backend: String) { formerSessions[feed] = (backend, session) }
    func setSession(_ session: Session, of account: AccountKey) { sessions[account] = session }
    func setOnSessionLock(_ body: @escaping @Sendable () async -> Void) { onSessionLock = body }
    /// Exclusive per account, as a store's session lock is.
    let accountLocks = AccountLocks()
    func lockSession(of account: AccountKey, wait: TimeInterval) async throws -> SessionLock {
        try await accountLocks.lock(account)
        sessionLocks += 1
        await onSessionLock?()
        return SessionLock(account: account)
    }
    func unlockSession(_ lock: SessionLock) {
        sessionLocks -= 1
        accountLocks.unlock(lock.account)
    }

    func videosToResolve(among ids: [VideoID], inFeed feed: String) -> [VideoID] { ids.filter { videos[$0] == nil } }
    func unresolvedVideoIDs(inFeed feed: String, limit: Int) -> [VideoID] { Array(unresolved.sorted().prefix(limit)) }

    func apply(_ page: FeedPage, videos: [Video], under lease: FeedLease, announcing announcer: (any PageAnnouncer)?) async throws -> PageWriteResult {
        try await apply([(page, videos)], under: lease, announcing: announcer)[0]
    }

    /// All the pages or none, as in a real store.
    func apply(_ pages: [(page: FeedPage, videos: [Video])], under lease: FeedLease,
               announcing announcer: (any PageAnnouncer)?) async throws -> [PageWriteResult] {
        precondition(pages.count <= pagesPerTransaction)
        commits += 1
        let number = commits
        await beforeCommit?(number)
        for (page, _) in pages { log.record("apply(\(page.nextCursor?.position ?? "no cursor"))") }
        if number == failCommitNumber { throw ServiceError(.storage, "committing a page", "disk full") }
        transactions.append(pages.map { $0.page.nextCursor?.position ?? "no cursor" })
        return pages.map(write)
    }

    private func write(_ page: FeedPage, videos: [Video]) -> PageWriteResult {
        var result = PageWriteResult()
        for change in page.changes {
            switch change {
            case .upsert(let post):
                if posts[post.id] == nil { result.inserted += 1 } else if posts[post.id] != post { result.updated += 1 } else { result.unchanged += 1 }
                posts[post.id] = post
                for id in post.videoIDs where self.videos[id] == nil { unresolved.insert(id) }
            case .delete(let id):
                if posts.removeValue(forKey: id) != nil { result.deleted += 1 }
            }
        }
        for video in videos {
            self.videos[video.id] = video
            unresolved.remove(video.id)
        }
        // A streamed batch has no cursor: the stored one stays, as in a real store.
        if let next = page.nextCursor { storedCursor = next }
        if let position = page.streamPosition { streamPosition = position }
        renamed += page.renames
        return result
    }

    func saveVideos(_ videos: [Video], under lease: FeedLease) -> Int {
        for video in videos {
            self.videos[video.id] = video
            unresolved.remove(video.id)
        }
        return videos.count
    }

    func recordSync(_ outcome: SyncOutcome, under lease: FeedLease) {
        log.record(outcome.error == nil ? "recordSync(ok)" : "recordSync(error)")
        outcomes.append(outcome)
        if let backend = outcome.backend { storedBackend = backend }
    }

    var lockHolds = 0
    var lockError: ServiceError?
    /// What the lease answers a daemon's claim: `false` when another daemon synced the feed.
    var due = true
    func setLockError(_ error: ServiceError) { lockError = error }
    /// With a lock error: a lease that comes free only to a caller that waits for it, after `probe` ran.
    var freedForWaiters: (@Sendable () async -> Void)?
    func freeLockForWaiters(after probe: @escaping @Sendable () async -> Void) { freedForWaiters = probe }
    func setDue(_ due: Bool) { self.due = due }
    func acquireLease(onFeed feed: String, holder: String, wait: TimeInterval, onlyIfDue: Bool) async throws -> FeedLease? {
        log.record("lock")
        if let probe = freedForWaiters, wait > 0 {
            await probe()
        } else if let lockError {
            throw lockError
        }
        if onlyIfDue && !due { return nil }
        lockHolds += 1
        return FeedLease(feed: feed, token: "mock")
    }
    func release(_ lease: FeedLease) {
        log.record("unlock")
        lockHolds -= 1
    }
    /// Puts posts in the store as an earlier sync from `backend` would have.
    func seed(posts seeded: [Post], backend: String) {
        for post in seeded { posts[post.id] = post }
        storedBackend = backend
        if let session = sessions.removeValue(forKey: Self.feedAccount()) { sessions[Self.feedAccount(backend: backend)] = session }
    }
    func unseenPosts(of walk: FullWalk) -> (unseen: Int, cached: Int) {
        (posts.keys.filter { !walk.seen.contains($0) }.count, posts.count)
    }
    func deleteUnseenPosts(of walk: FullWalk, under lease: FeedLease) -> Int {
        log.record("deleteUnseenPosts")
        let gone = posts.keys.filter { !walk.seen.contains($0) }
        gone.forEach { posts[$0] = nil }
        return gone.count
    }
}

func makeSession(_ token: String, expiresAt: Date? = nil, refreshable: Bool = true) -> Session {
    Session(accessToken: Secret(token), refreshToken: refreshable ? Secret("refresh-\(token)") : nil, expiresAt: expiresAt)
}

func makePost(_ id: String, text: String = "hello", videos: [String] = []) -> Post {
    Post(id: PostID(id), author: User(id: "u1", handle: "ada", displayName: "Ada"), text: text,
         createdAt: Date(timeIntervalSince1970: 1_700_000_000), videoIDs: videos.map { VideoID($0) })
}

func makeVideo(_ id: String) -> Video {
    Video(id: VideoID(id), title: "Video \(id)", duration: 60, streamURL: URL(string: "https://videos.example.com/\(id)")!)
}

func makePage(_ posts: [Post], deleting: [String] = [], cursor: String, hasMore: Bool) -> FeedPage {
    FeedPage(changes: posts.map { .upsert($0) } + deleting.map { .delete(PostID($0)) },
             nextCursor: FeedCursor(position: cursor), hasMore: hasMore)
}

/// Records the waits a sync asks for instead of sleeping.
final class SleepRecorder: Sendable {
    private let recorded = Mutex<[TimeInterval]>([])
    func record(_ seconds: TimeInterval) { recorded.withLock { $0.append(seconds) } }
    var waits: [TimeInterval] { recorded.withLock { $0 } }
}
