import Core
import Foundation

/// A post as every read selects it: its own columns (``PostColumns``), its feed, its read mark and star,
/// and its author's and reposter's profiles joined from `users`, each under its own name.
///
/// ```swift
/// let sql = "SELECT \(StoredPostColumns.select) FROM posts p \(StoredPostColumns.joins) WHERE p.feed = ?1"
/// var reader = try StoredPostColumns(ColumnLayout(names))
/// let stored = reader.storedPost(row)
/// ```
public struct StoredPostColumns {
    /// The select list; a query may add columns of its own after it, under names of their own.
    public static let select = (PostColumns.names.map { "p.\($0) AS \($0)" } + [
        "p.feed AS feed", "s.read_at AS read_at", "s.starred_at AS starred_at",
        "u.handle AS author_handle", "u.display_name AS author_display_name", "u.avatar_url AS author_avatar_url",
        "r.handle AS reposter_handle", "r.display_name AS reposter_display_name", "r.avatar_url AS reposter_avatar_url",
    ]).joined(separator: ", ")

    /// The declared kind of each column of ``select``, in its order: a store that copies rows
    /// (``PostRowBatch``) reads each as the codec will ask for it.
    public static let kinds: [ColumnKind] = PostColumns.columns.map(\.kind) + [.text, .integer, .integer] + Array(repeating: .text, count: 6)

    /// The names of the columns of ``select``, in its order.
    public static let names = PostColumns.names + ["feed", "read_at", "starred_at", "author_handle", "author_display_name",
                                                   "author_avatar_url", "reposter_handle", "reposter_display_name", "reposter_avatar_url"]

    /// The joins ``select`` reads from, after `FROM posts p`.
    public static let joins = """
        LEFT JOIN users u ON u.pk = p.author_pk
        LEFT JOIN users r ON r.pk = p.repost_by_pk
        LEFT JOIN post_state s ON s.feed = p.feed AND s.post_id = p.id
        """

    private let post: PostColumns.Positions
    private let feed, readAt, starredAt: Int
    private let author, reposter: (handle: Int, displayName: Int, avatarURL: Int)
    /// The authors met in one read, by their columns: a page of an export has a few thousand
    /// posts by a few dozen people, and each avatar URL would otherwise be parsed per post.
    private var users: [[String?]: User] = [:]

    /// - Throws: ``MissingColumn`` when the query lacks a column of ``select``.
    public init(_ layout: ColumnLayout) throws {
        post = try PostColumns.Positions(layout)
        feed = try layout.position(of: "feed")
        readAt = try layout.position(of: "read_at")
        starredAt = try layout.position(of: "starred_at")
        author = (try layout.position(of: "author_handle"), try layout.position(of: "author_display_name"),
                  try layout.position(of: "author_avatar_url"))
        reposter = (try layout.position(of: "reposter_handle"), try layout.position(of: "reposter_display_name"),
                    try layout.position(of: "reposter_avatar_url"))
    }

    /// The stored post of a row, without its videos (a store reads those apart).
    public mutating func storedPost(_ row: some ResultRow) -> StoredPost {
        let columns = PostColumns(row, at: post)
        let author = user(columns.authorID, self.author, in: row)
        let repostedBy = columns.repostBy.map { user($0, reposter, in: row) }
        return StoredPost(feed: row.text(feed) ?? "", post: columns.post(author: author, repostedBy: repostedBy),
                          isRead: row.integer(readAt) != nil, isStarred: row.integer(starredAt) != nil)
    }

    private mutating func user(_ id: String, _ at: (handle: Int, displayName: Int, avatarURL: Int), in row: some ResultRow) -> User {
        let handle = row.text(at.handle), displayName = row.text(at.displayName), avatarURL = row.text(at.avatarURL)
        let key = [id, handle, displayName, avatarURL]
        if let known = users[key] { return known }
        let user = UserColumns.user(id: id, handle: handle, displayName: displayName, avatarURL: avatarURL)
        users[key] = user
        return user
    }
}
