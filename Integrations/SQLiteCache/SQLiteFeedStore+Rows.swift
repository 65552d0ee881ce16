import Core
import Foundation
import StoreKit

/// Export's read: a page of posts copied as raw rows, so that making posts of them (or writing
/// them straight out) happens off the store's thread.
extension SQLiteFeedStore: PostRowReader {
    public func postRows(matching query: PostQuery) throws -> PostRowBatch {
        precondition(query.stable, "rows are read for an export's stable pages")
        let db = try db("reading posts")
        return try storage("reading posts") {
            try db.withReadTransaction {
                let page = Self.stablePage(query)
                let statement = try db.statement(page.sql)
                // The select list is StoredPostColumns.select: its names in its order.
                guard statement.columnNames == StoredPostColumns.names else {
                    throw ServiceError(.storage, "reading posts", "the page's columns are not StoredPostColumns.select's")
                }
                let videoQuery = try db.statement("""
                    SELECT \(VideoColumns.names.joined(separator: ", ")) FROM videos WHERE feed = ? AND id = ? AND resolved = 1
                    """)
                let videoPositions = try VideoColumns.Positions(ColumnLayout(videoQuery.columnNames))
                let kinds = StoredPostColumns.kinds
                let videoIDs = try ColumnLayout(StoredPostColumns.names).position(of: "video_ids")
                let feed = try ColumnLayout(StoredPostColumns.names).position(of: "feed")
                var batch = PostRowBatch(names: StoredPostColumns.names, reservingRows: query.limit)
                var resolved: [String: [String: [Video]]] = [:]
                try statement.bind(page.values)
                defer { statement.reset() }
                while try statement.step() {
                    statement.copyRow(into: &batch, kinds: kinds)
                    // The post's videos as `posts(matching:)` attaches them: each id, in order.
                    // A page's posts share a few videos: each is read once a page, in the page's transaction.
                    var videos: [Video] = []
                    if let ids = statement.text(videoIDs), ids != "[]" {
                        let feedName = statement.text(feed) ?? ""
                        videos = try JSONStringArray.decode(ids).flatMap { id in
                            if let known = resolved[feedName]?[id] { return known }
                            let found = try videoQuery.query([.text(feedName), .text(id)]) { VideoColumns($0, at: videoPositions).video }.compactMap { $0 }
                            resolved[feedName, default: [:]][id] = found
                            return found
                        }
                    }
                    batch.endRow(videos: videos)
                }
                return batch
            }
        }
    }
}
