import Core
import Foundation
import StoreKit

/// A page as ``PostgresFeedStore/apply(_:videos:under:)`` sends it: the page's net effect, its
/// posts as binary COPY rows and its authors and videos as parameters, all encoded before the store's
/// queue is reached (``PostgresFeedStore/prepare(_:)``), so the next page is encoded while one commits.
public struct PostgresPreparedPage: Sendable {
    let page: FeedPage
    /// The posts to upsert, in COPY's text format (more than ``jsonLimit`` of them) or as one
    /// `jsonb` parameter (``JSONRows``), and how many.
    let posts: Rows
    let upsertCount: Int
    /// The authors and reposters, newest profile each, as a JSON array of ``UserColumns``; `nil` when none.
    let profiles: String?
    /// Every video id the page's posts name, once each, as a text array; `nil` when none.
    let videoIDs: String?
    /// The ids deleted, as a text array; `nil` when none.
    let deletions: String?
    /// Each upserted post's videos in order, by post id; posts without videos are left out.
    let videosByPost: [String: [String]]
    /// The posts as a first walk's page may copy them straight into `posts`; `nil` for a short
    /// page, or one with a post or author whose words the server makes (``PostgresDirectRows``).
    let direct: PostgresDirectRows?

    /// How a page's posts travel.
    enum Rows: Sendable {
        /// Into the staging table with binary COPY (``CopyRows``), then upserted from it: the
        /// fastest for a long page.
        case copy([UInt8])
        /// As one parameter of the upsert: no staging table, no COPY, so the whole page goes in
        /// two round trips (a web feed's page of a few posts is mostly fixed cost).
        case json(String)
        case none
    }

    /// The most posts a page sends as one `jsonb` parameter rather than with COPY.
    static let jsonLimit = 64

    /// - Parameter searchWords: whether each post brings its own words as a vector
    ///   (``PostgresSearchWords``), which the server has agreed to; otherwise it makes them all.
    init(_ page: FeedPage, searchWords: Bool) {
        self.page = page
        // The page's net effect, in its order: the last change to an id wins (one statement
        // cannot touch a row twice).
        var last: [PostID: FeedChange] = [:]
        var order: [PostID] = []
        var profiles: [String: UserColumns] = [:]
        var videoIDs: [String] = []
        var seenVideos = Set<String>()
        for change in page.changes {
            let id: PostID
            switch change {
            case .upsert(let post):
                id = post.id
                for (user, at) in [(post.author, post.createdAt)] + (post.repost.map { [($0.by, $0.at ?? post.createdAt)] } ?? []) {
                    let row = UserColumns(user, at: at)
                    if let known = profiles[row.id], known.profileAt >= row.profileAt { continue }
                    profiles[row.id] = row
                }
                for video in post.videoIDs where seenVideos.insert(video.rawValue).inserted { videoIDs.append(video.rawValue) }
            case .delete(let deleted):
                id = deleted
            }
            if last.updateValue(change, forKey: id) == nil { order.append(id) }
        }
        var deletions: [String] = [], videosByPost: [String: [String]] = [:], upserts: [Post] = []
        for id in order {
            switch last[id] {
            case .upsert(let post):
                upserts.append(post)
                if !post.videoIDs.isEmpty { videosByPost[post.id.rawValue] = post.videoIDs.map(\.rawValue) }
            case .delete(let id): deletions.append(id.rawValue)
            case nil: break
            }
        }
        upsertCount = upserts.count
        if upserts.isEmpty {
            posts = .none
            direct = nil
        } else if upserts.count <= Self.jsonLimit {
            var rows = JSONRows(reserving: upserts.count * 400)
            for post in upserts {
                rows.beginRow()
                PostColumns(post, dialect: .postgres).write(to: &rows)
                rows.text(searchWords ? PostgresSearchWords.vector(post.text, post.title, post.contentWarning) : nil)
                rows.endRow()
            }
            posts = .json(rows.finish())
            direct = nil
        } else {
            var rows = CopyRows(reserving: upserts.count * 400)
            var staged: [PostgresDirectRows.Row]? = searchWords ? [] : nil
            staged?.reserveCapacity(upserts.count)
            for post in upserts {
                let start = rows.bytes.count + 2
                PostColumns(post, dialect: .postgres).write(to: &rows)
                let vector = rows.bytes.count
                let words = rows.searchWords(searchWords ? (post.text, post.title, post.contentWarning) : nil)
                if let words {
                    staged?.append(PostgresDirectRows.Row(id: post.id.rawValue, author: post.author.id.rawValue, sharer: post.repost?.by.id.rawValue,
                                                          fields: start ..< vector, vector: vector ..< rows.bytes.count, words: words))
                } else {
                    staged = nil
                }
                rows.endRow()
            }
            let bytes = rows.finish()
            posts = .copy(bytes)
            direct = staged.flatMap { PostgresDirectRows(bytes, rows: $0, authors: profiles.values) }
        }
        self.profiles = profiles.isEmpty ? nil : jsonText(Array(profiles.values))
        self.videoIDs = videoIDs.isEmpty ? nil : pgArray(videoIDs)
        self.deletions = deletions.isEmpty ? nil : pgArray(deletions)
        self.videosByPost = videosByPost
    }
}
