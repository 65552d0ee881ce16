import Core

/// A page as ``SQLiteFeedStore/apply(_:videos:under:)`` writes it: its rows already
/// encoded (``PageRows``), on the caller's task, by ``SQLiteFeedStore/prepare(_:)``.
public struct SQLitePreparedPage: Sendable {
    let page: FeedPage
    let rows: PageRows

    init(_ page: FeedPage) {
        self.page = page
        rows = PageRows(page.changes)
    }
}
