import Core

/// The videos of the statuses the post service has read, held until the sync asks for them:
/// on Mastodon a video's metadata arrives inside its status, not from a separate host.
///
/// Entries leave when looked up, and the oldest go past `capacity`, so memory stays flat.
actor MastodonMedia: VideoService {
    private var videos: [VideoID: Video] = [:]
    private var order: [VideoID] = []
    let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    func remember(_ new: [Video]) {
        for video in new where videos.updateValue(video, forKey: video.id) == nil { order.append(video.id) }
        while order.count > capacity { videos[order.removeFirst()] = nil }
    }

    /// Videos of statuses read in this run; one from an earlier run is not found and stays
    /// unresolved until its status is read again.
    func videos(withIDs ids: [VideoID]) async throws -> [Video] {
        let found = ids.compactMap { videos.removeValue(forKey: $0) }
        if !found.isEmpty { order.removeAll { id in found.contains { $0.id == id } } }
        return found
    }
}
