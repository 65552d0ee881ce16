import StoreKit

/// A long page's posts as a feed's first walk copies them straight into `posts`, with binary COPY:
/// no staging table, no upsert, no join to the authors on the server.
///
/// The rows are encoded with the page's own profiles when the page is prepared, off the store's
/// queue: each post's author's handle and name, and their words numbered on after the post's own
/// in its search vector. Once the page's transaction has upserted its authors and read them back
/// (``readAuthors``), only their keys are filled in (``rows(feed:authors:)``); an author whose
/// stored profile is not the page's (a newer one was stored before) has the page's rows encoded
/// again with what is stored.
///
/// Only for pages whose every post and author ``PostgresSearchWords`` vouches for: the server makes
/// the others' vectors, which only the staged upsert can ask it to.
struct PostgresDirectRows: Sendable {
    /// Where one post is in the staged COPY rows (``PostgresPreparedPage/posts``), and in ``tails``.
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
        /// Its fields after `feed` in ``tails``, and where its author's and sharer's keys go there.
        var tail = 0 ..< 0
        var authorKey = 0
        var sharerKey: Int?
    }

    private struct Profile {
        var handle: String?
        var name: String?
        var words: [AuthorWords.Entry]
    }

    /// The staged COPY rows the ranges point into.
    let staged: [UInt8]
    let rows: [Row]
    /// The page's authors and sharers, as a text array.
    let authorIDs: String
    /// Each row's fields after `feed`, written with the page's own profiles, keys left at zero.
    private let tails: [UInt8]
    private let profiles: [String: Profile]

    /// `nil` when a profile of the page holds words the server would make itself, or a post's
    /// and its author's words together are more than a vector keeps.
    init?(_ staged: [UInt8], rows: [Row], authors: some Collection<UserColumns>) {
        var profiles: [String: Profile] = [:]
        for author in authors {
            guard let words = AuthorWords(handle: author.handle, name: author.displayName) else { return nil }
            profiles[author.id] = Profile(handle: author.handle, name: author.displayName, words: words.entries)
        }
        var tails = CopyRows(reserving: staged.count + rows.count * 64, headed: false)
        var encoded: [Row] = []
        encoded.reserveCapacity(rows.count)
        for var row in rows {
            let start = tails.bytes.count + 2
            let author = profiles[row.author]
            tails.encodedFields(staged[row.fields], count: PostColumns.columns.count)
            row.authorKey = tails.bytes.count + 4
            tails.integer(0)
            tails.text(author?.handle)
            tails.text(author?.name)
            row.sharerKey = row.sharer == nil ? nil : tails.bytes.count + 4
            tails.integer(row.sharer == nil ? nil : 0)
            guard tails.searchWords(post: staged[row.vector], words: row.words, author: author?.words ?? []) else { return nil }
            tails.endRow()
            row.tail = start ..< tails.bytes.count
            encoded.append(row)
        }
        self.rows = encoded
        self.staged = staged
        self.tails = tails.bytes
        self.profiles = profiles
        authorIDs = pgArray(Array(profiles.keys))
    }

    /// Reads the page's authors as its transaction stored them (`$2`, ``authorIDs``): a newer
    /// profile stored before stays.
    static let readAuthors = "SELECT id, pk, handle, display_name FROM users WHERE feed = $1 AND id = ANY($2::text[])"

    /// The columns the rows fill, in their order.
    static let copy = "COPY posts (feed, \(PostColumns.names.joined(separator: ", ")), author_pk, author_handle, author_name, repost_by_pk, search) "
        + "FROM STDIN (FORMAT binary)"

    /// The rows for ``copy``, given the page's authors as ``readAuthors`` answered them; `nil`
    /// when an author is missing, or a stored author's words are ones the server would make
    /// itself or too many with a post's.
    func rows(feed: String, authors answer: [[String?]]) -> [UInt8]? {
        var keys: [String: Int64] = [:]
        var stored: [String: Profile] = [:]
        var asPrepared = true
        for row in answer {
            guard let id = row[0], let key = row[1].flatMap({ Int64($0) }) else { continue }
            keys[id] = key
            if let profile = profiles[id], profile.handle == row[2], profile.name == row[3] { continue }
            guard let words = AuthorWords(handle: row[2], name: row[3]) else { return nil }
            stored[id] = Profile(handle: row[2], name: row[3], words: words.entries)
            asPrepared = false
        }
        guard profiles.keys.allSatisfy({ keys[$0] != nil }) else { return nil }
        guard asPrepared else { return encoded(feed: feed, keys: keys, profiles: profiles.merging(stored) { $1 }) }
        var copy = CopyRows.header
        copy.reserveCapacity(tails.count + rows.count * (8 + feed.utf8.count) + 2)
        let feedField = Self.textField(feed)
        tails.withUnsafeBufferPointer { tails in
            for row in rows {
                Self.append16(PostColumns.columns.count + 6, to: &copy)
                copy.append(contentsOf: feedField)
                let start = copy.count - row.tail.lowerBound
                copy.append(contentsOf: UnsafeBufferPointer(rebasing: tails[row.tail]))
                Self.put(keys[row.author] ?? 0, at: start + row.authorKey, in: &copy)
                if let sharer = row.sharer, let at = row.sharerKey { Self.put(keys[sharer] ?? 0, at: start + at, in: &copy) }
            }
        }
        copy.append(contentsOf: [0xFF, 0xFF])
        return copy
    }

    /// The rows encoded again, with the authors' `profiles` as stored and their `keys`; `nil` as
    /// ``CopyRows/searchWords(post:words:author:)`` refuses a vector.
    private func encoded(feed: String, keys: [String: Int64], profiles: [String: Profile]) -> [UInt8]? {
        var copy = CopyRows(reserving: staged.count + rows.count * 64)
        for row in rows {
            let author = profiles[row.author]
            copy.text(feed)
            copy.encodedFields(staged[row.fields], count: PostColumns.columns.count)
            copy.integer(keys[row.author])
            copy.text(author?.handle)
            copy.text(author?.name)
            copy.integer(row.sharer.flatMap { keys[$0] })
            guard copy.searchWords(post: staged[row.vector], words: row.words, author: author?.words ?? []) else { return nil }
            copy.endRow()
        }
        return copy.finish()
    }

    private static func textField(_ text: String) -> [UInt8] {
        var field = CopyRows(reserving: text.utf8.count + 6, headed: false)
        field.text(text)
        return Array(field.bytes.dropFirst(2))   // the row's count, which this one field does not need
    }

    private static func append16(_ value: Int, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    private static func put(_ key: Int64, at offset: Int, in bytes: inout [UInt8]) {
        withUnsafeBytes(of: key.bigEndian) { bytes.replaceSubrange(offset ..< offset + 8, with: $0) }
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
