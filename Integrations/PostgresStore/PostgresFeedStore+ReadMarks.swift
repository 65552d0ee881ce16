import Core
import Foundation
import StoreKit

/// Read marks: local to this store, and kept through every sync.
extension PostgresFeedStore: ReadMarker {
    public func setRead(_ read: Bool, postID: PostID, inFeed feed: String?) throws -> [String] {
        let db = try db("marking post \(postID)")
        return try storage("marking post \(postID)") {
            try db.transaction {
                // A read mark exists nowhere else: it waits for the disk, unlike a page.
                try db.execute("SET LOCAL synchronous_commit = on")
                let feeds = try db.query(Self.sql.feeds(holding: postID, in: feed))
                guard feeds.count == 1 else { return feeds }
                try db.run(Self.sql.setRead(read, postID: postID, inFeed: feeds[0], at: Date()))
                return feeds
            }
        }
    }
}
