import Core
import Foundation

/// `feedsync rules apply`: a feed's posts read with only what rules look at, a page at a time
/// by row key, and the blocked ones removed by id in batches.
extension StoreSQL {
    /// `p.feed || ''` keeps the feed's indexes out of the plan: read by one of them, each page
    /// sorted every post of the feed after the key (SQLite: `SEARCH p USING INDEX posts_by_time`,
    /// `USE TEMP B-TREE FOR ORDER BY`), so a million posts took a thousand sorts; by the row key
    /// it is one range scan (`SEARCH p USING INTEGER PRIMARY KEY (rowid>?)`).
    private static let ruleSubjects = Shared("""
        SELECT p.pk, p.id, p.author_id, u.handle, p.text, p.title, p.language, p.visibility, p.reply_to,
               p.repost_by, r.handle, p.repost_of, p.video_ids, p.attachments
        FROM posts p LEFT JOIN users u ON u.pk = p.author_pk LEFT JOIN users r ON r.pk = p.repost_by_pk
        WHERE p.pk > $2 AND (p.feed || '') = $1 ORDER BY p.pk LIMIT $3
        """)
    /// Ids removed by one statement; a shorter batch repeats its last id, so every batch runs
    /// the same statement text (SQLite keeps its prepared statements by their text).
    public static let removalBatch = 100
    private static let removePosts = Shared(
        "DELETE FROM posts WHERE feed = $1 AND id IN (" + (2...(removalBatch + 1)).map { "$\($0)" }.joined(separator: ", ")
            + ") RETURNING 1")

    /// At most `limit` posts of `feed` after row key `after`, in row order, each with its row key
    /// and only what a rule looks at (``Core/PostRuleSweeper/ruleSubjects(ofFeed:after:limit:)``).
    public func ruleSubjects(ofFeed feed: String, after: Int64?, limit: Int) -> StoreQuery<(Int64, Post)> {
        query(Self.ruleSubjects, [.text(feed), .integer(after ?? Int64.min), .integer(limit)]) { row in
            let id = row.text(1) ?? "", authorID = row.text(2) ?? ""
            let author = UserColumns.user(id: authorID, handle: row.text(3), displayName: nil, avatarURL: nil)
            var repost: Post.Repost?
            if let by = row.text(9), let original = row.text(11) {
                repost = Post.Repost(by: UserColumns.user(id: by, handle: row.text(10), displayName: nil, avatarURL: nil),
                                     originalID: PostID(original))
            }
            let videos = row.text(12) ?? "[]", attachments = row.text(13) ?? "[]"
            let post = Post(id: PostID(id), author: author, text: row.text(4) ?? "", createdAt: Date(timeIntervalSince1970: 0),
                            replyTo: row.text(8).map { PostID($0) },
                            videoIDs: JSONStringArray.decode(videos).map { VideoID($0) }, language: row.text(6),
                            visibility: row.text(7).flatMap(Post.Visibility.init(rawValue:)), repost: repost,
                            attachments: AttachmentsJSON.decode(attachments), title: row.text(5))
            return (row.integer(0) ?? 0, post)
        }
    }

    /// The statements that remove the posts of `feed` with these `ids`, ``removalBatch`` at a
    /// time; the rows each returns are the posts it removed.
    public func removePosts(_ ids: [PostID], ofFeed feed: String) -> [StoreStatement] {
        stride(from: 0, to: ids.count, by: Self.removalBatch).map { start in
            let batch = ids[start..<min(start + Self.removalBatch, ids.count)].map { SQLValue.text($0.rawValue) }
            let padded = batch + Array(repeating: batch[batch.count - 1], count: Self.removalBatch - batch.count)
            return statement(Self.removePosts, [.text(feed)] + padded)
        }
    }
}

extension SQLStore {
    public func ruleSubjects(ofFeed feed: String, after: Int64?, limit: Int) throws -> RuleSubjectPage {
        let rows = try query("reading the posts of feed \(feed) for its rules", Self.sql.ruleSubjects(ofFeed: feed, after: after, limit: limit))
        return RuleSubjectPage(posts: rows.map(\.1), next: rows.count == limit ? rows.last?.0 : nil)
    }

    public func removePosts(_ ids: [PostID], under lease: FeedLease) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try writing(under: lease, "removing \(ids.count) posts of feed \(lease.feed) that its rules block") { db in
            var removed = 0
            for statement in Self.sql.removePosts(ids, ofFeed: lease.feed) { removed += try db.run(statement) }
            return removed
        }
    }
}
