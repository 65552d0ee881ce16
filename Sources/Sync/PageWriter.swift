import Core

/// The one way a page reaches the store: a page of a sync's walk (``SyncEngine/run(full:progress:)``)
/// and a live stream's batch (``SyncEngine/commit(_:progress:)``) alike.
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

    /// Commits `page`, which `prepared` is (``Core/PageCommitter/prepare(_:)``), and adds what
    /// it did to `report`.
    ///
    /// - Throws: the store's failure (nothing of the page is kept), or `CancellationError`.
    func commit(_ page: FeedPage, prepared: Store.PreparedPage, report: inout SyncReport) async throws {
        let videos = try await VideoResolution(lease: lease, cache: store, host: host).resolve(page, report: &report)
        let result = try await store.apply(prepared, videos: videos, under: lease, announcing: announcer)
        report.add(result)
        report.pages += 1
        report.skippedItems += page.skipped.count
        report.filteredPosts += page.filtered.count
        if let polling = page.polling { report.polling = polling }
    }
}
