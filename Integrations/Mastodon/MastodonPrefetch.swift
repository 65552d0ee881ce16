import Foundation
import Synchronization

/// The next page of a walk back through a timeline, fetched while the current page is read, and
/// kept for the call that asks for it.
///
/// Each page comes from the `Link` of the one before, so the pages of a walk are requested one
/// at a time; but the next page's URL is known as soon as the current page's headers have come,
/// and its request can be on the wire while the current page's statuses are read. The fetch is
/// a child task of the call that starts it, which waits for it before returning; only the
/// answer is kept, and only the next call asking for the very same URL soon after gets it.
final class MastodonPrefetch: Sendable {
    private struct Kept {
        var url: URL
        var response: MastodonClient.Response
        var fetchedAt: ContinuousClock.Instant
    }

    /// How long a kept page may wait for its call: a sync asks for it at once; a much later
    /// call (a daemon's next sync resuming the same walk) fetches afresh.
    static let freshness: Duration = .seconds(30)

    private let kept = Mutex<Kept?>(nil)

    /// The page fetched ahead for `url`, if it is that URL's and fresh; whatever was kept is
    /// dropped either way.
    func take(_ url: URL) -> MastodonClient.Response? {
        guard let page = kept.withLock({ kept in defer { kept = nil }; return kept }), page.url == url,
              ContinuousClock.now - page.fetchedAt < Self.freshness else { return nil }
        return page.response
    }

    func keep(_ response: MastodonClient.Response, for url: URL) {
        kept.withLock { $0 = Kept(url: url, response: response, fetchedAt: .now) }
    }
}
