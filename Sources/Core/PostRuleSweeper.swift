/// A page of a feed's posts as ``PostRuleSweeper/ruleSubjects(ofFeed:after:limit:)`` reads them.
public struct RuleSubjectPage: Sendable {
    /// The posts, each with only what a rule looks at (see the method).
    public var posts: [Post]
    /// Where the next page starts; `nil` after the last.
    public var next: Int64?

    public init(posts: [Post], next: Int64?) {
        self.posts = posts
        self.next = next
    }
}

/// The store's role that `feedsync rules apply` uses: a feed's stored posts read with only what
/// the rules look at, a page at a time, and the posts the rules block removed by id.
public protocol PostRuleSweeper: Sendable {
    /// At most `limit` posts of `feed`, in the order they were stored, from `after` (the
    /// ``RuleSubjectPage/next`` of the page before; `nil`: from the first).
    ///
    /// Each post holds its id, text, title, language, visibility, reply, videos and attachments,
    /// its author's id and handle, and for a repost who shared it (id and handle) and the
    /// original's id; nothing else (no counts, dates, HTML, display names or labels).
    func ruleSubjects(ofFeed feed: String, after: Int64?, limit: Int) async throws -> RuleSubjectPage

    /// Removes the posts of the lease's feed with these ids, in one transaction, under `lease`.
    /// Read and starred marks of other posts stay as they are.
    ///
    /// - Returns: how many posts were removed (an id the feed does not hold counts for nothing).
    /// - Throws: ``ServiceError`` `.locked` when `lease` was lost (nothing is removed).
    func removePosts(_ ids: [PostID], under lease: FeedLease) async throws -> Int
}
