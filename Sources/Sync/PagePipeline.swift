/// The hand-over between a sync's page fetcher and its committing side, holding at most
/// `capacity` decoded pages at a time, the one committing included.
///
/// The fetcher ``reserve()``s a place before it fetches and decodes a page, and the committer
/// gives it back with ``committed()`` once the page is in the store; so with a capacity of 3,
/// pages N+1 and N+2 are fetched and decoded while page N commits, and page N+3 waits for that
/// commit.
/// Memory stays flat however fast the network is. A fetch failure is handed over in the page's
/// place. Every wait ends with `CancellationError` when its task is cancelled.
actor PagePipeline<Page: Sendable> {
    private let capacity: Int
    /// Pages reserved and not yet committed: fetching, decoded and waiting, or committing.
    private var held = 0
    private var pages: [Page] = []
    private var failure: (any Error)?
    private var taker: CheckedContinuation<Page, any Error>?
    private var reserver: CheckedContinuation<Void, any Error>?

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Waits until one more decoded page may be held, and counts it.
    func reserve() async throws {
        while held >= capacity {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { reserver = $0 }
            } onCancel: {
                Task { await self.cancelWaits() }
            }
        }
        try Task.checkCancellation()
        held += 1
    }

    /// Hands a page fetched under an earlier ``reserve()`` to the committing side.
    func put(_ page: Page) {
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

    /// Gives back the place of the page just committed, letting the fetcher decode another.
    func committed() {
        held = max(0, held - 1)
        if let reserver {
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
