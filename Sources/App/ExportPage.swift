import Core
import Foundation
import StoreKit

/// One page of an export as the store read it: raw rows from a store that copies them
/// (``PostRowReader``, SQLite), stored posts from another. `export` reads, encodes and writes
/// pages on threads of their own.
public enum ExportPage: Sendable {
    case rows(PostRowBatch)
    case posts([StoredPost])

    /// Reads the page of `feed` after `after` (from its newest post when `nil`).
    public static func read(_ store: any FeedStore, feed: String, since: Date?, after: StoredPost.Position?, limit: Int) async throws -> ExportPage {
        let query = PostQuery(feed: feed, limit: limit, since: since, stable: true, after: after)
        if let rows = store as? any PostRowReader { return .rows(try await rows.postRows(matching: query)) }
        return .posts(try await store.posts(matching: query))
    }

    /// How many posts the page holds.
    public var count: Int {
        switch self {
        case .rows(let batch): batch.count
        case .posts(let posts): posts.count
        }
    }

    /// Where the next page starts: after the last post of this one.
    public var lastPosition: StoredPost.Position? {
        switch self {
        case .rows(let batch): batch.lastPosition
        case .posts(let posts): posts.last?.position
        }
    }

    /// The page's posts as `export` writes them: JSON Lines, or CSV rows (without the header).
    public func encoded(csv: Bool) throws -> [UInt8] {
        var json = JSONWriter(escaping: .terminalControls, reserving: count * (csv ? 320 : 720))
        switch self {
        case .rows(let batch):
            var encoder = try PostRowEncoder(batch.layout)
            if csv { encoder.appendCSVRows(batch, to: &json.bytes) } else { encoder.appendJSONLines(batch, to: &json) }
        case .posts(let posts):
            for stored in posts {
                if csv {
                    PostRecord(stored).appendCSVRow(to: &json.bytes)
                } else {
                    PostRecord(stored).write(to: &json)
                    json.newline()
                }
            }
        }
        return json.bytes
    }
}
