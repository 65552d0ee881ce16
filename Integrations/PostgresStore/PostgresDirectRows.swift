import StoreKit

/// A long page's posts as a feed's first walk copies them straight into `posts`, with binary COPY:
/// no staging table, no upsert, no join to the authors on the server. The authors' keys, stored
/// handles and names, and the words of both in each post's search vector, are filled in once the
/// page's transaction has upserted its authors (``encode(feed:authors:)``).
///
/// Only for pages whose every post and author ``PostgresSearchWords`` vouches for: the server makes
/// the others' vectors, which only the staged upsert can ask it to.
struct PostgresDirectRows: Sendable {
    /// Where one post is in the staged COPY rows (``PostgresPreparedPage/posts``).
    struct Row: Sendable {
        var id: String
        var author: String
        var sharer: String?
        /// Its ``PostColumns`` fields, in COPY's binary form.
        var fields: Range<Int>
        /// Its own words' `tsvector` field.
        var vector: Range<Int>
        /// How many words that vector numbers.
        var words: Int
    }

    /// The staged COPY rows the ranges point into.
    let staged: [UInt8]
    let rows: [Row]
    /// The page's authors and sharers, as a text array.
    let authorIDs: String

    /// `nil` when a profile of the page holds words the server would make itself.
    init?(_ staged: [UInt8], rows: [Row], authors: some Collection<UserColumns>) {
        guard authors.allSatisfy({ AuthorWords(handle: $0.handle, name: $0.displayName) != nil }) else { return nil }
        self.staged = staged
        self.rows = rows
        authorIDs = pgArray(authors.map(\.id))
    }

    /// Reads the page's authors as its transaction stored them (`$2`, ``authorIDs``): a newer
    /// profile stored before stays.
    static let readAuthors = "SELECT id, pk, handle, display_name FROM users WHERE feed = $1 AND id = ANY($2::text[])"

    /// The columns the rows fill, in their order.
    static let copy = "COPY posts (feed, \(PostColumns.names.joined(separator: ", ")), author_pk, author_handle, author_name, repost_by_pk, search) "
        + "FROM STDIN (FORMAT binary)"

    /// The rows for ``copy``, given the page's authors as ``readAuthors`` answered; `nil` when a
    /// stored author's words are ones the server would make itself.
    func encode(feed: String, authors answer: [[String?]]) -> [UInt8]? {
        var authors: [String: (pk: Int64?, handle: String?, name: String?, words: [AuthorWords.Entry])] = [:]
        for row in answer {
            guard let id = row[0] else { continue }
            guard let words = AuthorWords(handle: row[2], name: row[3]) else { return nil }
            authors[id] = (row[1].flatMap { Int64($0) }, row[2], row[3], words.entries)
        }
        var copy = CopyRows(reserving: staged.count + rows.count * 64)
        for row in rows {
            let author = authors[row.author]
            copy.text(feed)
            copy.encodedFields(staged[row.fields], count: PostColumns.columns.count)
            copy.integer(author?.pk)
            copy.text(author?.handle)
            copy.text(author?.name)
            copy.integer(row.sharer.flatMap { authors[$0]?.pk })
            copy.searchWords(post: staged[row.vector], words: row.words, author: author?.words ?? [])
            copy.endRow()
        }
        return copy.finish()
    }

    /// Links the copied posts to their videos, each post and video found by its key: the posts'
    /// ids (`$1`), positions (`$2`) and video ids (`$3`) of the feed (`$4`).
    static let linkVideos = """
        INSERT INTO post_videos (post_pk, position, video_pk)
        SELECT p.pk, t.position, v.pk FROM unnest($1::text[], $2::int[], $3::text[]) AS t(id, position, video)
        CROSS JOIN LATERAL (SELECT pk FROM posts WHERE feed = $4 AND id = t.id LIMIT 1) p
        CROSS JOIN LATERAL (SELECT pk FROM videos WHERE feed = $4 AND id = t.video LIMIT 1) v
        ON CONFLICT DO NOTHING
        """

    /// ``linkVideos`` for the rows' posts with videos (`videosByPost`); `nil` when none has any.
    func videoLinks(_ videosByPost: [String: [String]], feed: String) -> PostgresConnection.Statement? {
        var ids: [String] = [], positions: [String] = [], videos: [String] = []
        for row in rows {
            for (position, video) in (videosByPost[row.id] ?? []).enumerated() {
                ids.append(row.id)
                positions.append("\(position)")
                videos.append(video)
            }
        }
        guard !ids.isEmpty else { return nil }
        return (Self.linkVideos, [pgArray(ids), "{" + positions.joined(separator: ",") + "}", pgArray(videos), feed])
    }
}
