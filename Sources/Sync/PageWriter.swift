import Core

/// The one way a page reaches the store: pages of a sync's walk (``SyncEngine/run(full:progress:)``),
/// as many together as the store commits in one transaction, and a live stream's batch
/// (``SyncEngine/commit(_:progress:)``) alike.
///
/// Under the feed's lease, with the videos its posts refer to (those it carries, and those the
/// video host resolves: ``VideoResolution``), the page is committed whole, with what it says of
/// the feed's position — its cursor when it has one (a streamed batch has none, so the cursor a
/// poll committed stays), its stream position, its renames — and counted in the report as a
/// page: posts written, items skipped, posts the rules blocked (the page comes filtered:
/// ``PostRules/filter(_:)``), what the backend asked of the next poll.
struct PageWriter<Store: PageCommitter & VideoCache>: Sendable {
    let store: Store
    /// The feed's lease, held by the caller for the commit.
    let lease: FeedLease
    /// Resolves the videos the store does not hold yet.
    let host: any VideoService
    /// Makes the page's webhook deliveries, which the store queues in the page's transaction;
    /// `nil`: none.
    var announcer: (any PageAnnouncer)? = nil

    /// Commits `pages` in one transaction, each with the page it was prepared from
    /// (``Core/PageCommitter/prepare(_:)``), and adds what each did to `report`, handing
    /// `committed` each page with the report as it stands after it.
    ///
    /// - Parameter pages: at most the store's ``Core/PageCommitter/pagesPerTransaction``.
    /// - Throws: the store's failure (nothing of the pages is kept), or `CancellationError`.
    func commit(_ pages: [(page: FeedPage, prepared: Store.PreparedPage)], report: inout SyncReport,
                committed: (FeedPage, SyncReport) -> Void = { _, _ in }) async throws {
        // Closures, not key paths: a key path into a generic type is built anew at each call.
        let feedPages = pages.map { $0.page }
        let videos = try await VideoResolution(lease: lease, cache: store, host: host).resolve(feedPages, report: &report)
        let results = try await store.apply(zip(pages, videos).map { (page: $0.prepared, videos: $1) }, under: lease, announcing: announcer)
        for (page, result) in zip(feedPages, results) {
            report.add(result)
            report.pages += 1
            report.skippedItems += page.skipped.count
            report.filteredPosts += page.filtered.count
            if let polling = page.polling { report.polling = polling }
            committed(page, report)
        }
    }
}
