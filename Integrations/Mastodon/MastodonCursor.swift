import Core
import Foundation

/// Where a Mastodon sync stands, kept in ``Core/FeedCursor/position``; only this integration reads it.
///
/// - `backfill`: the first sync walking back in time along `rel="next"`. It has stored
///   `fetched` statuses so far, and `forward` is where later syncs will start.
/// - `forward`: later syncs walking forward from the newest stored status along `rel="prev"`
///   (`min_id`), so that they fetch only what is newer, without gaps.
///
/// Both hold the server's own pagination URLs, never ids the client computed: bookmarks and
/// favourites paginate on ids that are not in the payload.
enum MastodonCursor: Equatable {
    case backfill(fetched: Int, forward: URL?, next: URL)
    case forward(URL)

    init?(_ cursor: FeedCursor) {
        let parts = cursor.position.split(separator: " ").map(String.init)
        switch parts.first {
        case "forward" where parts.count == 2:
            guard let url = URL(string: parts[1]) else { return nil }
            self = .forward(url)
        case "backfill" where parts.count == 4:
            guard let fetched = Int(parts[1]), let next = URL(string: parts[3]) else { return nil }
            self = .backfill(fetched: fetched, forward: parts[2] == "-" ? nil : URL(string: parts[2]), next: next)
        default:
            return nil
        }
    }

    var feedCursor: FeedCursor {
        switch self {
        case .forward(let url): return FeedCursor(position: "forward \(url.absoluteString)")
        case .backfill(let fetched, let forward, let next):
            return FeedCursor(position: "backfill \(fetched) \(forward?.absoluteString ?? "-") \(next.absoluteString)")
        }
    }
}
