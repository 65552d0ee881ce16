import Core
import Foundation

/// Resolves the videos a feed's pages refer to: each is asked of the video host once, and one
/// the host could not resolve is asked again on a later sync.
///
/// A host failure never fails the sync: the posts are stored regardless, their videos left
/// unresolved for a later sync to retry.
struct VideoResolution: Sendable {
    /// The sync's lease, under which resolved videos are saved.
    let lease: FeedLease
    let cache: any VideoCache
    let host: any VideoService

    /// The videos to store with each of `pages`, which commit together: those it carried
    /// itself, and those the host resolved of the ones the store does not hold yet. The store
    /// and the host are asked once for all the pages, so a video two of them refer to is asked
    /// for once, and stored with the first.
    func resolve(_ pages: [FeedPage], report: inout SyncReport) async throws -> [[Video]] {
        let referenced = pages.map(\.referencedVideoIDs)
        var seen = Set<VideoID>()
        let ids = referenced.joined().filter { seen.insert($0).inserted }
        guard !ids.isEmpty else { return pages.map { _ in [] } }
        let unresolved = try await cache.videosToResolve(among: ids, inFeed: feed)
        // Videos that came with a page are stored as they came (an unchanged row is not
        // rewritten); only the others are asked of the video host.
        let carried = zip(pages, referenced).map { page, ids in
            let referenced = Set(ids)
            return page.videos.filter { referenced.contains($0.id) }
        }
        let carriedIDs = Set(carried.joined().map(\.id))
        report.videosResolved += unresolved.filter { carriedIDs.contains($0) }.count
        let wanted = unresolved.filter { !carriedIDs.contains($0) }
        guard !wanted.isEmpty else { return carried }
        let found: [Video]
        do {
            found = try await host.videos(withIDs: wanted)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            found = []
        }
        let wantedSet = Set(wanted)
        let resolved = found.filter { wantedSet.contains($0.id) }
        report.videosResolved += resolved.count
        report.videosUnresolved += wanted.count - resolved.count
        var unstored = Dictionary(resolved.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        return zip(carried, referenced).map { carried, ids in carried + ids.compactMap { unstored.removeValue(forKey: $0) } }
    }

    /// Gives up to `limit` videos that earlier syncs could not resolve another chance.
    ///
    /// - Returns: how many were resolved now.
    func retryUnresolved(limit: Int) async throws -> Int {
        let ids = try await cache.unresolvedVideoIDs(inFeed: feed, limit: limit)
        guard !ids.isEmpty else { return 0 }
        let found: [Video]
        do {
            found = try await host.videos(withIDs: ids)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return 0   // still unresolvable; a later sync tries again
        }
        guard !found.isEmpty else { return 0 }
        let wanted = Set(ids)
        let resolved = found.filter { wanted.contains($0.id) }
        _ = try await cache.saveVideos(resolved, under: lease)
        return resolved.count
    }

    var feed: String { lease.feed }
}
