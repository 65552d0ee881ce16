import Core
import Foundation

/// Video resolution: the videos a page refers to, and those earlier syncs could not resolve.
extension SyncEngine {
    /// Resolves the videos the store does not hold yet. A host failure leaves them unresolved
    /// (the posts are stored regardless) and they are retried on a later sync.
    func resolveVideos(of page: FeedPage, report: inout SyncReport) async throws -> [Video] {
        let ids = page.referencedVideoIDs
        guard !ids.isEmpty else { return [] }
        let unresolved = try await services.store.videosToResolve(among: ids, inFeed: feed)
        // Videos that came with the page are stored as they came (an unchanged row is not
        // rewritten); only the others are asked of the video host.
        let referenced = Set(ids)
        let carried = page.videos.filter { referenced.contains($0.id) }
        let carriedIDs = Set(carried.map(\.id))
        report.videosResolved += unresolved.filter { carriedIDs.contains($0) }.count
        let wanted = unresolved.filter { !carriedIDs.contains($0) }
        guard !wanted.isEmpty else { return carried }
        let found: [Video]
        do {
            found = try await services.videos.videos(withIDs: wanted)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            found = []
        }
        let wantedSet = Set(wanted)
        let resolved = found.filter { wantedSet.contains($0.id) }
        report.videosResolved += resolved.count
        report.videosUnresolved += wanted.count - resolved.count
        return carried + resolved
    }

    /// Gives videos that earlier syncs could not resolve another chance.
    func retryUnresolvedVideos() async throws -> Int {
        let ids = try await services.store.unresolvedVideoIDs(inFeed: feed, limit: options.unresolvedVideoRetryLimit)
        guard !ids.isEmpty else { return 0 }
        let found: [Video]
        do {
            found = try await services.videos.videos(withIDs: ids)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return 0   // still unresolvable; a later sync tries again
        }
        guard !found.isEmpty else { return 0 }
        let wanted = Set(ids)
        let resolved = found.filter { wanted.contains($0.id) }
        _ = try await services.store.saveVideos(resolved, inFeed: feed)
        return resolved.count
    }
}
