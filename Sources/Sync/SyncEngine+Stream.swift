import Core

/// A live stream's batches, committed through the same ``PageWriter`` as a polled page.
extension SyncEngine {
    /// Commits a batch a live stream delivered to the feed, under the feed's lease, as a page.
    ///
    /// The page carries no cursor, so the feed's stays as its last sync committed it: a poll of
    /// the same feed may commit pages while the stream does (one process's SQLite lease is
    /// shared by its tasks), and the cursor never steps back. The batch's stream position and
    /// renames are committed with its changes, or not at all.
    ///
    /// - Parameter progress: called once the batch is committed, with the items it skipped.
    /// - Returns: what the batch did, one page's worth; `nil` for an empty batch, or for a feed
    ///   that has not synced yet (no cursor): its first sync, which the stream's catch-up runs,
    ///   reads the posts, and it has no stored author for a rename to reach.
    /// - Throws: the store's failure, nothing of the batch kept; ``ServiceError`` `.locked` when
    ///   another process holds the feed's lease past ``Options/lockWait``.
    public func commit(_ batch: LiveBatch, progress: @Sendable (Progress) -> Void = { _ in }) async throws -> SyncReport? {
        guard !batch.isEmpty else { return nil }
        let store = services.store
        guard let lease = try await store.acquireLease(onFeed: feed, holder: options.lockHolder, wait: options.lockWait,
                                                       onlyIfDue: false) else { return nil }
        let result: Result<SyncReport?, any Error>
        do {
            result = .success(try await commit(batch.page, to: store, under: lease))
        } catch {
            result = .failure(error)
        }
        await store.release(lease)
        let report = try result.get()
        if let report {
            progress(Progress(pages: report.pages, posts: report.newPosts + report.updatedPosts + report.unchangedPosts,
                              skipped: batch.page.skipped))
        }
        return report
    }

    /// The store opened from `any SyncStore` to its own type, whose pages it prepares as its own.
    private func commit<Store: SyncStore>(_ page: FeedPage, to store: Store, under lease: FeedLease) async throws -> SyncReport? {
        guard try await store.cursor(ofFeed: feed) != nil else { return nil }
        let page = admitted(page)
        var report = SyncReport(feed: feed)
        try await PageWriter(store: store, lease: lease, host: services.videos, announcer: options.announcer).commit([(page, store.prepare(page))], report: &report)
        return report
    }
}
