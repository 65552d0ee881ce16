import Core
import Foundation

/// The media archive's coordination: which addresses the stored posts point at, which to fetch,
/// in what order and how many at once, and what goes when the archive is over `maxBytes`.
///
/// Plain code over roles: the store's ``Core/MediaLedger`` and ``Core/FeedReader``, the
/// archive's ``Core/MediaFetching`` and the process's ``Core/HostGate``, so requests to one
/// host take turns as a sync's do. It runs after syncing, in slots of its own.
public struct MediaArchiver: Sendable {
    /// What one feed's media may be.
    public struct FeedSettings: Sendable, Hashable {
        public var kinds: Set<MediaKind>
        public var limits: MediaLimits
        public var credential: MediaCredential?

        public init(kinds: Set<MediaKind>, limits: MediaLimits, credential: MediaCredential? = nil) {
            self.kinds = kinds
            self.limits = limits
            self.credential = credential
        }
    }

    /// What one run did.
    public struct Report: Sendable, Hashable {
        public var fetched = 0
        public var failed = 0
        public var refused = 0
        /// Removed (or not kept) to stay under `maxBytes`.
        public var skippedForRoom = 0
        public var bytes: Int64 = 0

        public init() {}
    }

    let store: any MediaLedger & FeedReader
    let fetcher: any MediaFetching
    let gate: HostGate
    let feeds: [String: FeedSettings]
    let maxBytes: Int64?
    let concurrency: Int
    let log: Logger
    /// Stored posts read at a time.
    static let pageSize = 500
    /// Due items read, fetched and recorded (in one transaction) at a time: what a stop loses at most.
    static let batchSize = 250

    public init(store: any MediaLedger & FeedReader, fetcher: any MediaFetching, gate: HostGate, feeds: [String: FeedSettings],
                maxBytes: Int64?, concurrency: Int, log: Logger) {
        self.store = store
        self.fetcher = fetcher
        self.gate = gate
        self.feeds = feeds
        self.maxBytes = maxBytes
        self.concurrency = max(1, concurrency)
        self.log = log
    }

    /// Records what every archived feed's stored posts point at; how many references it read.
    public func scan(now: Date = Date()) async throws -> Int {
        var count = 0
        for (feed, settings) in feeds.sorted(by: { $0.key < $1.key }) {
            var after: StoredPost.Position?
            while true {
                try Task.checkCancellation()
                let page = try await store.posts(matching: PostQuery(feed: feed, limit: Self.pageSize, stable: true, after: after))
                let references = page.flatMap { MediaReferences.of($0, kinds: settings.kinds) }
                try await store.recordMedia(references, at: now)
                count += references.count
                guard page.count == Self.pageSize, let last = page.last else { break }
                after = last.position
            }
        }
        return count
    }

    /// Fetches every due item once, `concurrency` at a time and each host's turn at the gate,
    /// then makes room under `maxBytes`.
    ///
    /// - Parameter progress: told after each item, with how many are done and how many were due.
    public func fetch(includingSkipped: Bool = false, progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in }) async throws -> Report {
        var report = Report()
        var attempted = Set<URL>()
        while true {
            try Task.checkCancellation()
            let due = try await store.mediaDue(limit: Self.batchSize, includingSkipped: includingSkipped && attempted.isEmpty)
                .filter { !attempted.contains($0.item.url) && $0.feed.map { feeds[$0] != nil } ?? false }
            guard !due.isEmpty else { break }
            let base = attempted.count
            due.forEach { attempted.insert($0.item.url) }
            let outcomes = try await fetchAll(due, done: base, total: base + due.count, progress: progress)
            try await store.recordMediaOutcomes(outcomes)
            for outcome in outcomes {
                switch outcome.status {
                case .fetched:
                    report.fetched += 1
                    report.bytes += outcome.bytes ?? 0
                case .refused: report.refused += 1
                default: report.failed += 1
                }
            }
            report.skippedForRoom += try await makeRoom()
        }
        return report
    }

    /// The outcomes of `due`, fetched `concurrency` at a time.
    private func fetchAll(_ due: [(item: MediaItem, feed: String?)], done: Int, total: Int,
                          progress: @escaping @Sendable (Int, Int) -> Void) async throws -> [MediaItem] {
        try await withThrowingTaskGroup(of: MediaItem.self) { group in
            var next = due.makeIterator()
            var outcomes: [MediaItem] = []
            func start(_ entry: (item: MediaItem, feed: String?)) {
                let settings = entry.feed.flatMap { feeds[$0] } ?? FeedSettings(kinds: [], limits: MediaLimits())
                let host = "\(entry.item.url.host ?? ""):\(entry.item.url.port ?? (entry.item.url.scheme == "https" ? 443 : 80))"
                group.addTask { [fetcher, gate] in
                    try await gate.withPermit(for: host) {
                        await fetcher.fetch(entry.item, limits: settings.limits, credential: settings.credential)
                    }
                }
            }
            for _ in 0..<concurrency { if let entry = next.next() { start(entry) } }
            while let outcome = try await group.next() {
                outcomes.append(outcome)
                progress(done + outcomes.count, total)
                if let entry = next.next() { start(entry) }
            }
            return outcomes
        }
    }

    /// Removes the oldest unstarred media of the largest feeds until the archive is under
    /// `maxBytes`; how many addresses went.
    @discardableResult
    public func makeRoom() async throws -> Int {
        guard let maxBytes else { return 0 }
        let summary = try await store.mediaSummary()
        guard summary.bytes > maxBytes else { return 0 }
        let holdings = try await store.mediaHoldings()
        let urls = MediaRoom.evictions(from: holdings, total: summary.bytes, maxBytes: maxBytes)
        let byURL = Dictionary(holdings.map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
        for url in urls {
            guard let holding = byURL[url] else { continue }
            // An outcome writes the status and file fields only; the row keeps its kind.
            try await store.recordMediaOutcomes([MediaItem(url: url, kind: .image, status: .skipped,
                                                           reason: "removed to keep the archive under its maxBytes (\(maxBytes) bytes)")])
            if try await store.mediaRows(withDigest: holding.digest) == 0 { try fetcher.removeFile(digest: holding.digest) }
            log.info("media removed for room", ["url": Terminal.safe(url.absoluteString, limit: 200), "bytes": "\(holding.bytes)"])
        }
        return urls.count
    }

    /// Removes the rows no stored post refers to any more, and their files when no other row
    /// holds the same bytes.
    ///
    /// - Returns: rows removed, files removed and the bytes they held.
    public func prune() async throws -> (rows: Int, files: Int, bytes: Int64) {
        let unreferenced = try await store.unreferencedMedia()
        try await store.removeMedia(unreferenced.map(\.url))
        var files = 0
        var bytes: Int64 = 0
        for digest in Set(unreferenced.compactMap(\.digest)) where try await store.mediaRows(withDigest: digest) == 0 {
            try fetcher.removeFile(digest: digest)
            files += 1
            bytes += unreferenced.first { $0.digest == digest }?.bytes ?? 0
        }
        try fetcher.removeStalePartials(olderThan: 7 * 86_400)
        return (unreferenced.count, files, bytes)
    }
}
