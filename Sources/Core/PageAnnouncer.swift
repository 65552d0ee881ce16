import Foundation

/// Says which webhook deliveries a committed page makes, from what the store did with it: how
/// webhooks learn of new, updated and deleted posts.
///
/// The store asks it inside the page's own transaction and queues what it returns there
/// (``PageCommitter/apply(_:videos:under:announcing:)``), so a page is committed with its
/// deliveries or not at all: a crash can neither lose the deliveries of a committed page nor
/// queue any for a page that was not. It must be quick and must not touch the store: the store
/// is mid-transaction when it asks.
public protocol PageAnnouncer: Sendable {
    /// - Parameters:
    ///   - page: the page as it is committed (its blocked posts already out).
    ///   - result: what the store did: the ids inserted, rewritten and deleted.
    /// - Returns: the deliveries to queue, and the time they are due (now).
    func announcement(feed: String, page: FeedPage, result: PageWriteResult) -> (deliveries: [WebhookDelivery], due: Date)
}
