import Core

/// What a live stream delivered between two commits, folded into one page
/// (``FeedPage/init(streamed:skipped:videos:streamPosition:renames:)``) for
/// ``SyncEngine/commit(_:progress:)``.
///
/// Each post keeps only its last change (an edit after its creation, a deletion after both), in
/// the order the posts first changed; each video its last description; the stream position is
/// the last one reported. Skipped items and renames are kept in order. ``LiveEvent/connected`` is
/// the connection's business, not a change: it is left out.
///
///     let batch = LiveBatch(events)
///     if !batch.isEmpty { _ = try await engine.commit(batch) }
public struct LiveBatch: Sendable, Equatable {
    /// The batch as the page every feed of the connection commits.
    public let page: FeedPage

    public init(_ events: some Sequence<LiveEvent>) {
        var order: [PostID] = []
        var latest: [PostID: FeedChange] = [:]
        var videoOrder: [VideoID] = []
        var videos: [VideoID: Video] = [:]
        var skipped: [SkippedItem] = []
        var renames: [AuthorRename] = []
        var position: String?
        func note(_ change: FeedChange, of id: PostID) {
            if latest.updateValue(change, forKey: id) == nil { order.append(id) }
        }
        for event in events {
            switch event {
            case .connected: continue
            case .position(let reached): position = reached
            case .renamed(let author, let handle, let at): renames.append(AuthorRename(author: author, handle: handle, at: at))
            case .skipped(let item): skipped.append(item)
            case .deleted(let id): note(.delete(id), of: id)
            case .upserted(let post, let carried):
                note(.upsert(post), of: post.id)
                for video in carried where videos.updateValue(video, forKey: video.id) == nil { videoOrder.append(video.id) }
            }
        }
        page = FeedPage(streamed: order.compactMap { latest[$0] }, skipped: skipped, videos: videoOrder.compactMap { videos[$0] },
                        streamPosition: position, renames: renames)
    }

    /// Whether the batch holds nothing to commit or count: no change, skipped item, rename or
    /// stream position.
    public var isEmpty: Bool {
        page.changes.isEmpty && page.skipped.isEmpty && page.renames.isEmpty && page.streamPosition == nil
    }
}
