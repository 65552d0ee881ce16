import Core
import Foundation

/// Where a Bluesky sync stands, kept in ``Core/FeedCursor/position``; only this integration reads it.
///
/// Bluesky's timelines page one way only, from the newest item back, with an opaque cursor;
/// there is no `min_id` to walk forward from. So a sync always starts at the top, and the
/// state remembers the newest sort time stored (the watermark) to know where to stop:
///
/// - `backfill`: the first sync walking back. It has kept `fetched` items so far; `top` is the
///   newest sort time seen, the watermark once the walk ends; `next` is the server's cursor.
/// - `catchUp`: a later sync walking back from the top to `watermark`; `top` is the newest
///   sort time of this walk.
/// - `idle`: between syncs, with the newest sort time stored (`nil`: nothing stored yet).
///
/// Times are microseconds since 1970, so that no two distinct times of the wire's
/// millisecond or microsecond precision compare equal.
enum BlueskyCursor: Equatable {
    case backfill(fetched: Int, top: Int64?, next: String)
    case catchUp(watermark: Int64, top: Int64?, next: String)
    case idle(watermark: Int64?)

    /// The longest server cursor kept: real ones are a time and a CID, under 100 bytes.
    static let maxServerCursorBytes = 1_024

    init?(_ cursor: FeedCursor) {
        // The server's cursor comes last and may hold anything printable, spaces included.
        let parts = cursor.position.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
        guard parts.first == "bluesky", parts.count >= 3 else { return nil }
        func time(_ text: String) -> Int64?? { text == "-" ? .some(nil) : Int64(text).map { .some($0) } }
        switch parts[1] {
        case "idle" where parts.count == 3:
            guard let watermark = time(parts[2]) else { return nil }
            self = .idle(watermark: watermark)
        case "backfill" where parts.count == 5:
            guard let fetched = Int(parts[2]), fetched >= 0, let top = time(parts[3]), Self.isServerCursor(parts[4]) else { return nil }
            self = .backfill(fetched: fetched, top: top, next: parts[4])
        case "catchup" where parts.count == 5:
            guard let watermark = Int64(parts[2]), let top = time(parts[3]), Self.isServerCursor(parts[4]) else { return nil }
            self = .catchUp(watermark: watermark, top: top, next: parts[4])
        default:
            return nil
        }
    }

    var feedCursor: FeedCursor {
        func text(_ time: Int64?) -> String { time.map(String.init) ?? "-" }
        switch self {
        case .idle(let watermark): return FeedCursor(position: "bluesky idle \(text(watermark))")
        case .backfill(let fetched, let top, let next): return FeedCursor(position: "bluesky backfill \(fetched) \(text(top)) \(next)")
        case .catchUp(let watermark, let top, let next): return FeedCursor(position: "bluesky catchup \(watermark) \(text(top)) \(next)")
        }
    }

    /// A cursor fit to keep and send back: 1–1024 bytes of printable ASCII.
    static func isServerCursor(_ text: String) -> Bool {
        (1...maxServerCursorBytes).contains(text.utf8.count) && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// A time as the cursor keeps it.
    static func microseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }
}
