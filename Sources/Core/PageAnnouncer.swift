/// Told of each page a sync or a live stream committed, with what the store did with it: how
/// webhooks learn of new, updated and deleted posts.
///
/// It is called after the page's transaction, before the next page is committed; what it
/// queues it must queue durably (the store's ``WebhookQueue``), and quickly: a sync waits for it.
public protocol PageAnnouncer: Sendable {
    /// - Parameters:
    ///   - page: the page as it was committed (its blocked posts already out).
    ///   - result: what the store did: the ids inserted, rewritten and deleted.
    /// - Throws: when what it announces could not be queued; the sync fails with it.
    func announce(feed: String, page: FeedPage, result: PageWriteResult) async throws
}
