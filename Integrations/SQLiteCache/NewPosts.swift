import StoreKit

/// The posts a page transaction inserted that are not yet in the search index, linked to their
/// videos or counted in their feed's version. Each of the three is one statement for all of
/// them (``complete(_:feed:)``), at the end of the transaction's pages, or earlier, before a
/// statement whose triggers would rewrite one of them: an update or deletion of posts, an
/// author's rename, or an author's new handle or name on a later page. Those triggers take the
/// old text out of the search index, which a post not yet in it would corrupt. A new trigger that
/// rewrites posts needs its statement to complete them first too (`NewPostsGroupTests` shows what
/// a missing one does).
///
/// Completing once per transaction rather than once per page: every completion writes a new
/// segment of the search index, and over a 20,000-status Mastodon walk of 40-status pages in
/// transactions of eight, SQLite alone took 0.34–0.44 s of CPU completing per transaction,
/// 0.55–0.81 s per page (`Benchmarks/sqlite_floor.c`, issue 40).
struct NewPosts {
    /// Their keys, in the order inserted.
    private var keys: [Int64] = []
    /// Whether any of their pages refers to a video.
    private var linking = false
    /// The handle and name their authors have on them, by the author's id: a later page that
    /// names one of those authors otherwise could rename them, and a trigger rewrite the post.
    private var authors: [String: AuthorText] = [:]
    /// The author slots (``PageRows/users``) of the posts this page inserted.
    private var slots: Set<Int> = []

    private struct AuthorText: Equatable {
        var handle, name: String?
    }

    /// Notes a post the page inserted, by its key and its author's slot.
    mutating func append(_ key: Int64, author slot: Int, linking pageLinks: Bool) {
        keys.append(key)
        slots.insert(slot)
        linking = linking || pageLinks
    }

    /// At the end of a page's posts: what the page's new posts hold of their authors (`authors`
    /// has three values a slot: the key, handle and name the posts were written with).
    mutating func endPage(_ rows: PageRows, pinned: PinnedRows, authors written: PinnedRows) {
        for slot in slots {
            let id = pinned.text(at: rows.users[slot] + PageRows.userID) ?? ""
            authors[id] = AuthorText(handle: written.text(at: slot * 3 + 1), name: written.text(at: slot * 3 + 2))
        }
        slots.removeAll(keepingCapacity: true)
    }

    /// Whether the upserts of a page's authors (`rows`) might give one of these posts' authors
    /// another handle or name: one of them is on the page with a handle or name other than the
    /// posts have.
    func mayRename(_ rows: PageRows, pinned: PinnedRows) -> Bool {
        guard !keys.isEmpty else { return false }
        return rows.users.contains { user in
            guard let held = authors[pinned.text(at: user + PageRows.userID) ?? ""] else { return false }
            return held != AuthorText(handle: pinned.text(at: user + PageRows.userHandle), name: pinned.text(at: user + PageRows.userDisplayName))
        }
    }

    /// Adds the posts to the search index, links them to their videos and moves the feed's
    /// counter by their number. New rows take consecutive keys, so each statement is most often
    /// over a range of keys rather than a list.
    mutating func complete(_ statements: PageStatements, feed: String) throws {
        defer {
            keys.removeAll(keepingCapacity: true)
            authors.removeAll(keepingCapacity: true)
            slots.removeAll(keepingCapacity: true)
            linking = false
        }
        guard let first = keys.first, let last = keys.last else { return }
        if last - first + 1 == Int64(keys.count), zip(keys, keys.dropFirst()).allSatisfy({ $1 == $0 + 1 }) {
            for statement in linking ? [statements.indexPostRange, statements.linkPostRange] : [statements.indexPostRange] {
                try statement.bind(first, at: 1)
                try statement.bind(last, at: 2)
                try statement.execute()
            }
        } else {
            let list = JSONStringArray.encode(keys.map(String.init), dialect: .sqlite)
            for statement in linking ? [statements.indexPosts, statements.linkPosts] : [statements.indexPosts] {
                try statement.bind(list, at: 1)
                try statement.execute()
            }
        }
        try statements.countInserts.bind(feed, at: 1)
        try statements.countInserts.bind(Int64(keys.count), at: 2)
        try statements.countInserts.execute()
    }
}

extension PinnedRows {
    /// The value at `index` as text; `nil` for NULL.
    func text(at index: Int) -> String? {
        switch values[index] {
        case .text(let offset, let count): String(decoding: UnsafeBufferPointer(rebasing: bytes[offset ..< offset + count]), as: UTF8.self)
        case .integer(let value): String(value)
        case .null: nil
        }
    }
}
