import Foundation

/// What one page did to the store.
public struct PageWriteResult: Hashable, Sendable {
    public var inserted = 0
    public var updated = 0
    /// Posts whose stored row already matched and so were not rewritten.
    public var unchanged = 0
    public var deleted = 0
    /// Rows the store actually wrote, in every table, cursor included.
    public var rowsWritten = 0
    /// Authors the page's ``FeedPage/renames`` gave a new handle.
    public var renamed = 0
    /// The posts inserted, rewritten and deleted, by id, in the page's order: what webhooks tell.
    public var insertedIDs: [PostID] = []
    public var updatedIDs: [PostID] = []
    public var deletedIDs: [PostID] = []

    public init(inserted: Int = 0, updated: Int = 0, unchanged: Int = 0, deleted: Int = 0, rowsWritten: Int = 0) {
        self.inserted = inserted
        self.updated = updated
        self.unchanged = unchanged
        self.deleted = deleted
        self.rowsWritten = rowsWritten
    }
}

/// The summary of one sync of one feed.
public struct SyncReport: Hashable, Sendable {
    public var feed: String
    public var newPosts = 0
    public var updatedPosts = 0
    public var unchangedPosts = 0
    public var deletedPosts = 0
    /// Items dropped because they could not be read.
    public var skippedItems = 0
    /// Posts the feed's rules blocked: not stored, and not deletions.
    public var filteredPosts = 0
    /// Posts the feed's `"keep"` removed after the sync (``Retention``).
    public var prunedPosts = 0
    public var videosResolved = 0
    /// Videos the host could not resolve this time; they are retried on later syncs.
    public var videosUnresolved = 0
    public var pages = 0
    /// Requests sent to the backends, logins and video lookups included.
    public var requests = 0
    public var rowsWritten = 0
    /// Authors whose handle a live stream's rename changed (``PageWriteResult/renamed``).
    public var renamedAuthors = 0
    public var seconds: Double = 0
    /// A holder that died without letting go, whose lease on the feed this sync took over,
    /// in words: `"process 4242"`.
    public var tookOverLeaseFrom: String?
    /// What the backend asked of the next poll, from the last page that said.
    public var polling: PollingHint?
    /// Whether this sync walked the feed from the start to delete the posts the server no
    /// longer lists (a full sync, or the first after a backend swap).
    public var walkedToSweep = false
    /// On such a walk, why nothing was deleted, as a sentence: an item was skipped without an
    /// id, so the walk cannot tell which stored posts the server still lists. `nil` when the
    /// sweep ran.
    public var sweepWithheld: String?

    public init(feed: String) { self.feed = feed }

    /// Adds what one committed page did.
    public mutating func add(_ result: PageWriteResult) {
        newPosts += result.inserted
        updatedPosts += result.updated
        unchangedPosts += result.unchanged
        deletedPosts += result.deleted
        rowsWritten += result.rowsWritten
        renamedAuthors += result.renamed
    }
}

/// How one sync run ended, as the store records it.
public struct SyncOutcome: Hashable, Sendable {
    public var startedAt: Date
    public var finishedAt: Date
    /// `nil` for a success; otherwise the error's one-sentence description.
    public var error: String?
    /// What the run did, as far as it got.
    public var report: SyncReport?
    /// A successful run's posts backend (``FeedBackend/identity``), recorded with the run when it
    /// differs from the one the store held (a feed's first sync, a swapped backend), in the same
    /// transaction; `nil`: the stored one stays.
    public var backend: String?

    public init(startedAt: Date, finishedAt: Date, error: String? = nil, report: SyncReport? = nil, backend: String? = nil) {
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.error = error
        self.report = report
        self.backend = backend
    }
}
