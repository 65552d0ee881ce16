import Core
import Foundation

extension SyncEngine {
    /// `page` as the store is to have it: without the posts the feed's rules block
    /// (``PostRules/filter(_:)``) and, when its ``Core/Retention`` has an age limit, without
    /// the posts already past it (a web feed re-lists its old items: stored again, they would be
    /// removed again, or kept for ever while unread). Both are counted as filtered, and as seen
    /// by a walk from the start.
    func admitted(_ page: FeedPage) -> FeedPage {
        var page = options.rules.filter(page)
        guard let horizon = options.retention?.horizon(now: now()) else { return page }
        var kept: [FeedChange] = []
        kept.reserveCapacity(page.changes.count)
        for change in page.changes {
            if case .upsert(let post) = change, post.createdAt < horizon {
                page.filtered.append(post.id)
            } else {
                kept.append(change)
            }
        }
        page.changes = kept
        return page
    }
}
