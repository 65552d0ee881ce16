/// The hand-over between a sync's page fetcher and its committing side, holding a bounded number
/// of decoded pages at a time, those committing included.
///
/// The fetcher ``reserve()``s a place before it fetches and decodes a page, and the committer
/// gives places back with ``committed(_:)`` once their pages are in the store. Up to `least`
/// pages are always held, whatever their size, so with 3, pages N+1 and N+2 are fetched and
/// decoded while page N commits. More, up to `most`, are held while the pages decoded and not
/// yet committed are small together: fewer posts and fewer bytes than the budget (``PageSize``).
/// Small pages waiting commit together (``takeWaiting(upTo:)``).
/// Memory stays flat however fast the network is. A fetch failure is handed over in the page's
/// place. Every wait ends with `CancellationError` when its task is cancelled.
actor PagePipeline<Page: Sendable> {
    private let least: Int
    private let most: Int
    private let budget: PageSize
    /// Pages reserved and not yet committed: fetching, decoded and waiting, or committing.
    private var held = 0
    /// The size of the pages handed over and not yet committed.
    private var sizeHeld = PageSize()
    private var pages: [Page] = []
    private var failure: (any Error)?
    private var taker: CheckedContinuation<Page, any Error>?
    private var reserver: CheckedContinuation<Void, any Error>?

    /// - Parameters:
    ///   - least: pages always held, at least 1.
    ///   - most: pages held at most, however small.
    ///   - budget: past the `least` first, another page is fetched only while those held are
    ///     smaller than this, in posts and in bytes.
    init(least: Int, most: Int, budget: PageSize) {
        self.least = max(1, least)
        self.most = max(self.least, most)
        self.budget = budget
    }

    /// Whether a ``reserve()`` now waits.
    var isFull: Bool {
        held >= most || (held >= least && (sizeHeld.posts >= budget.posts || sizeHeld.bytes >= budget.bytes))
    }

    /// Waits until one more decoded page may be held, and counts it.
    func reserve() async throws {
        while isFull {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { reserver = $0 }
            } onCancel: {
                Task { await self.cancelWaits() }
            }
        }
        try Task.checkCancellation()
        held += 1
    }

    /// Hands a page of `size`, fetched under an earlier ``reserve()``, to the committing side.
    func put(_ page: Page, size: PageSize) {
        sizeHeld = sizeHeld + size
        if let taker {
            self.taker = nil
            taker.resume(returning: page)
        } else {
            pages.append(page)
        }
    }

    /// Hands `error` to the committing side instead of the next page.
    func fail(_ error: any Error) {
        if let taker {
            self.taker = nil
            taker.resume(throwing: error)
        } else {
            failure = error
        }
    }

    /// The next page, in order, waiting for it if need be.
    func take() async throws -> Page {
        if !pages.isEmpty { return pages.removeFirst() }
        if let failure { throw failure }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { taker = $0 }
        } onCancel: {
            Task { await self.cancelWaits() }
        }
    }

    /// Up to `limit` more pages, in order, of those already waiting: none is waited for, and a
    /// failure waits for the next ``take()``.
    func takeWaiting(upTo limit: Int) -> [Page] {
        let ready = Array(pages.prefix(max(0, limit)))
        pages.removeFirst(ready.count)
        return ready
    }

    /// Gives back the places of the pages just committed, of these sizes, letting the fetcher
    /// decode more.
    func committed(_ sizes: [PageSize]) {
        held = max(0, held - sizes.count)
        sizeHeld = sizes.reduce(sizeHeld, -)
        if !isFull, let reserver {
            self.reserver = nil
            reserver.resume()
        }
    }

    private func cancelWaits() {
        taker?.resume(throwing: CancellationError())
        taker = nil
        reserver?.resume(throwing: CancellationError())
        reserver = nil
    }
}

/// How much of a sync's memory decoded pages hold.
struct PageSize: Sendable {
    var posts = 0
    var bytes = 0

    static func + (a: PageSize, b: PageSize) -> PageSize { PageSize(posts: a.posts + b.posts, bytes: a.bytes + b.bytes) }
    static func - (a: PageSize, b: PageSize) -> PageSize {
        PageSize(posts: max(0, a.posts - b.posts), bytes: max(0, a.bytes - b.bytes))
    }
}
