import Core
import Foundation
import StoreKit

/// Read marks: local to this store, and kept through every sync.
extension SQLiteFeedStore {
    public func setRead(_ read: Bool, postID: PostID, inFeed feed: String?) throws -> [String] {
        let db = try db("marking post \(postID)")
        return try storage("marking post \(postID)") {
            try db.withTransaction {
                let feeds = try db.query(Self.sql.feeds(holding: postID, in: feed))
                guard feeds.count == 1 else { return feeds }
                try db.run(Self.sql.setRead(read, postID: postID, inFeed: feeds[0], at: Date()))
                return feeds
            }
        }
    }
}
