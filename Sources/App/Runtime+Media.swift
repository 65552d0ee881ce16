import Core
import Foundation
import Sync

extension Runtime {
    /// The media archive's coordinator over this runtime's store, or `nil` when the config
    /// has no `"media"` (or no integration keeps an archive).
    ///
    /// Its fetches take slots of their own (`media.concurrency`) and turns per host
    /// (`daemon.maxRequestsPerHost`) at a gate of their own, so they never hold a sync's.
    ///
    /// - Throws: a ``Core/ServiceError`` `.storage` naming the folder when it cannot be made.
    public func mediaArchiver(log: Logger) throws -> (archiver: MediaArchiver, fetcher: any MediaFetching)? {
        guard let media, let mediaCapability else { return nil }
        let fetcher: any MediaFetching
        do {
            fetcher = try mediaCapability.makeArchive(media.folder, log)
        } catch {
            throw ServiceError(.storage, "opening the media archive", "\(media.folder.path) cannot be used (\(error)); "
                               + "check \"media.path\" and the folder's permissions")
        }
        let archiver = MediaArchiver(store: store, fetcher: fetcher, gate: HostGate(maxInFlightPerHost: daemon.maxRequestsPerHost),
                                     feeds: media.feeds, maxBytes: media.maxBytes, concurrency: media.concurrency, log: log)
        return (archiver, fetcher)
    }
}
