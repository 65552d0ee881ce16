import Core
import Foundation

/// The one Post⇄row codec: a ``Post``'s own `posts` columns, named as both stores name them.
///
/// Both stores write a post through ``write(to:)`` (in ``columns`` order) and read it back by
/// column name through ``Positions``. The author's and reposter's profiles live in `users`
/// (``UserColumns``); a stored post's joined columns are ``StoredPostColumns``.
///
/// ```swift
/// PostColumns(post, dialect: .sqlite).write(to: &buffer)
/// let post = PostColumns(row, at: positions).post(author: author, repostedBy: nil)
/// ```
public struct PostColumns: Hashable, Sendable {
    public var id: String
    public var authorID: String
    public var text: String
    /// Times are milliseconds since 1970 (``StoredTime``).
    public var createdAt: Int64
    public var editedAt: Int64?
    public var replyTo: String?
    public var replyCount: Int64
    public var repostCount: Int64
    public var likeCount: Int64
    /// The post's video ids as a JSON array (``JSONStringArray``).
    public var videoIDs: String
    public var html: String?
    public var contentWarning: String?
    public var language: String?
    public var visibility: String?
    public var repostBy: String?
    public var repostOf: String?
    /// The non-video attachments as a JSON array of objects (``AttachmentsJSON``).
    public var attachments: String
    public var title: String?
    public var url: String?
    public var quoteOf: String?
    public var quoteCount: Int64
    /// The moderation labels as a JSON array of strings.
    public var labels: String
    public var repostAt: Int64?

    /// The columns, in the order ``write(to:)`` writes them.
    public static let columns: [(name: String, kind: ColumnKind)] = [
        ("id", .text), ("author_id", .text), ("text", .text), ("created_at", .integer), ("edited_at", .integer),
        ("reply_to", .text), ("reply_count", .integer), ("repost_count", .integer), ("like_count", .integer),
        ("video_ids", .text), ("html", .text), ("content_warning", .text), ("language", .text), ("visibility", .text),
        ("repost_by", .text), ("repost_of", .text), ("attachments", .text), ("title", .text), ("url", .text),
        ("quote_of", .text), ("quote_count", .integer), ("labels", .text), ("repost_at", .integer),
    ]

    /// The column names, in ``columns`` order.
    public static let names = columns.map(\.name)

    public init(_ post: Post, dialect: SQLDialect) {
        id = post.id.rawValue
        authorID = post.author.id.rawValue
        text = post.text
        createdAt = StoredTime.milliseconds(post.createdAt)
        editedAt = post.editedAt.map(StoredTime.milliseconds)
        replyTo = post.replyTo?.rawValue
        replyCount = Int64(post.counts.replies)
        repostCount = Int64(post.counts.reposts)
        likeCount = Int64(post.counts.likes)
        videoIDs = JSONStringArray.encode(post.videoIDs.map(\.rawValue), dialect: dialect)
        html = post.html
        contentWarning = post.contentWarning
        language = post.language
        visibility = post.visibility?.rawValue
        repostBy = post.repost?.by.id.rawValue
        repostOf = post.repost?.originalID.rawValue
        attachments = AttachmentsJSON.encode(post.attachments, dialect: dialect)
        title = post.title
        url = post.link?.absoluteString
        quoteOf = post.quoteOf?.rawValue
        quoteCount = Int64(post.counts.quotes)
        labels = JSONStringArray.encode(post.labels, dialect: dialect)
        repostAt = post.repost?.at.map(StoredTime.milliseconds)
    }

    /// Writes the values in ``columns`` order.
    public func write<Writer: ColumnWriter>(to writer: inout Writer) {
        writer.text(id)
        writer.text(authorID)
        writer.text(text)
        writer.integer(createdAt)
        writer.integer(editedAt)
        writer.text(replyTo)
        writer.integer(replyCount)
        writer.integer(repostCount)
        writer.integer(likeCount)
        writer.text(videoIDs)
        writer.text(html)
        writer.text(contentWarning)
        writer.text(language)
        writer.text(visibility)
        writer.text(repostBy)
        writer.text(repostOf)
        writer.text(attachments)
        writer.text(title)
        writer.text(url)
        writer.text(quoteOf)
        writer.integer(quoteCount)
        writer.text(labels)
        writer.integer(repostAt)
    }

    /// Where each column is in a query's result, looked up by name once per query.
    public struct Positions: Sendable {
        let at: [Int]

        /// - Throws: ``MissingColumn`` when the query lacks one of ``PostColumns/names``.
        public init(_ layout: ColumnLayout) throws {
            at = try PostColumns.names.map(layout.position(of:))
        }
    }

    /// Reads the columns from a result row; a column that is NULL where the schema forbids it
    /// reads as empty (`""`, 0, `[]`).
    public init(_ row: some ResultRow, at positions: Positions) {
        let at = positions.at
        id = row.text(at[0]) ?? ""
        authorID = row.text(at[1]) ?? ""
        text = row.text(at[2]) ?? ""
        createdAt = row.integer(at[3]) ?? 0
        editedAt = row.integer(at[4])
        replyTo = row.text(at[5])
        replyCount = row.integer(at[6]) ?? 0
        repostCount = row.integer(at[7]) ?? 0
        likeCount = row.integer(at[8]) ?? 0
        videoIDs = row.text(at[9]) ?? "[]"
        html = row.text(at[10])
        contentWarning = row.text(at[11])
        language = row.text(at[12])
        visibility = row.text(at[13])
        repostBy = row.text(at[14])
        repostOf = row.text(at[15])
        attachments = row.text(at[16]) ?? "[]"
        title = row.text(at[17])
        url = row.text(at[18])
        quoteOf = row.text(at[19])
        quoteCount = row.integer(at[20]) ?? 0
        labels = row.text(at[21]) ?? "[]"
        repostAt = row.integer(at[22])
    }

    /// The post these columns hold, with its author and (for a repost) who shared it, read
    /// from `users`. A repost needs both `repostedBy` and ``repostOf``.
    public func post(author: User, repostedBy: User?) -> Post {
        var repost: Post.Repost?
        if let repostedBy, let repostOf {
            repost = Post.Repost(by: repostedBy, originalID: PostID(repostOf), at: repostAt.map(StoredTime.date))
        }
        return Post(id: PostID(id), author: author, text: text, createdAt: StoredTime.date(createdAt),
                    editedAt: editedAt.map(StoredTime.date), replyTo: replyTo.map { PostID($0) },
                    counts: Post.Counts(replies: Int(clamping: replyCount), reposts: Int(clamping: repostCount),
                                        likes: Int(clamping: likeCount), quotes: Int(clamping: quoteCount)),
                    videoIDs: JSONStringArray.decode(videoIDs).map { VideoID($0) }, html: html,
                    contentWarning: contentWarning, language: language,
                    visibility: visibility.flatMap(Post.Visibility.init(rawValue:)), repost: repost,
                    attachments: AttachmentsJSON.decode(attachments), title: title, url: url.flatMap(URL.init(string:)),
                    quoteOf: quoteOf.map { PostID($0) }, labels: JSONStringArray.decode(labels))
    }
}
