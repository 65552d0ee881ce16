/// The hand-over between a sync's page fetcher and its committing side: a queue of at most
/// `capacity` fetched pages.
///
/// The fetcher waits while the queue is full, so memory stays flat however fast the network
/// is; the committer waits while it is empty. A fetch failure is handed over in the page's
/// place. Both waits end with `CancellationError` when their task is cancelled.
actor PagePipeline {
    private let capacity: Int
    private var pages: [SyncEngine.Fetched] = []
    private var failure: (any Error)?
    private var taker: CheckedContinuation<SyncEngine.Fetched, any Error>?
    private var putter: CheckedContinuation<Void, any Error>?

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Adds a page, first waiting for room.
    func put(_ page: SyncEngine.Fetched) async throws {
        while pages.count >= capacity {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { putter = $0 }
            } onCancel: {
                Task { await self.cancelWaits() }
            }
        }
        try Task.checkCancellation()
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
    func take() async throws -> SyncEngine.Fetched {
        if !pages.isEmpty {
            let page = pages.removeFirst()
            if let putter {
                self.putter = nil
                putter.resume()
            }
            return page
        }
        if let failure { throw failure }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { taker = $0 }
        } onCancel: {
            Task { await self.cancelWaits() }
        }
    }

    private func cancelWaits() {
        taker?.resume(throwing: CancellationError())
        taker = nil
        putter?.resume(throwing: CancellationError())
        putter = nil
    }
}
