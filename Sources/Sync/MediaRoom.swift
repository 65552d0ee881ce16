import Core
import Foundation

/// Which fetched files go when the archive is over `maxBytes`: the oldest unstarred media of
/// the largest feeds first. Plain arithmetic over the store's holdings, so a test gives it
/// holdings and reads the choice.
public struct MediaRoom: Sendable {
    /// One address: its file, and the feeds and posts referring to it.
    struct Entry {
        var url: URL
        var digest: String
        var bytes: Int64
        var feeds: Set<String>
        var newestPost: Date
        var starred: Bool
    }

    /// The addresses to remove, in order, until `total` is at most `maxBytes`; a file shared
    /// by two addresses frees its bytes when the last of them goes.
    ///
    /// - Parameter total: the bytes of the distinct files now.
    public static func evictions(from holdings: [MediaHolding], total: Int64, maxBytes: Int64) -> [URL] {
        guard total > maxBytes else { return [] }
        var entries: [URL: Entry] = [:]
        for holding in holdings {
            var entry = entries[holding.url] ?? Entry(url: holding.url, digest: holding.digest, bytes: holding.bytes, feeds: [],
                                                      newestPost: holding.postedAt, starred: false)
            entry.feeds.insert(holding.feed)
            entry.newestPost = max(entry.newestPost, holding.postedAt)
            entry.starred = entry.starred || holding.starred
            entries[holding.url] = entry
        }
        var feedBytes: [String: Int64] = [:]
        for entry in entries.values { for feed in entry.feeds { feedBytes[feed, default: 0] += entry.bytes } }
        var candidates: [String: [Entry]] = [:]
        for entry in entries.values where !entry.starred {
            for feed in entry.feeds { candidates[feed, default: []].append(entry) }
        }
        for feed in candidates.keys {
            candidates[feed]?.sort { ($0.newestPost, $0.url.absoluteString) > ($1.newestPost, $1.url.absoluteString) }
        }
        var digestUsers: [String: Int] = [:]
        for entry in entries.values { digestUsers[entry.digest, default: 0] += 1 }
        var remaining = total
        var removed = Set<URL>()
        var order: [URL] = []
        while remaining > maxBytes {
            let feed = candidates.filter { !$0.value.isEmpty }.keys.max { (feedBytes[$0] ?? 0, $1) < (feedBytes[$1] ?? 0, $0) }
            guard let feed, let entry = candidates[feed]?.popLast() else { break }
            guard removed.insert(entry.url).inserted else { continue }
            order.append(entry.url)
            for owner in entry.feeds { feedBytes[owner, default: 0] -= entry.bytes }
            digestUsers[entry.digest, default: 1] -= 1
            if digestUsers[entry.digest] == 0 { remaining -= entry.bytes }
        }
        return order
    }
}
