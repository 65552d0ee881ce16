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
        var feeds = media.feeds
        for (feed, credential) in mediaCredentials where feeds[feed] != nil { feeds[feed]?.credential = credential }
        for (feed, problem) in mediaCredentialProblems.sorted(by: { $0.key < $1.key }) where feeds[feed] != nil {
            log.warn("media fetched without the feed's credentials", ["feed": Terminal.safe(feed, limit: 80), "reason": Terminal.safe(problem, limit: 300)])
        }
        let archiver = MediaArchiver(store: store, fetcher: fetcher, gate: HostGate(maxInFlightPerHost: daemon.maxRequestsPerHost),
                                     feeds: feeds, maxBytes: media.maxBytes, concurrency: media.concurrency, log: log)
        return (archiver, fetcher)
    }

    /// The own server and credentials of each feed the archive keeps, as its integration reads
    /// them (``Core/PostsCapability/mediaCredential``), and why any could not be read.
    static func mediaCredentials(_ config: Config, registry: IntegrationRegistry) -> ([String: MediaCredential], [String: String]) {
        guard let media = config.media else { return ([:], [:]) }
        var found: [String: MediaCredential] = [:], problems: [String: String] = [:]
        for feed in config.feeds where media.feeds[feed.name] != nil {
            guard let name = (try? feed.posts.string("integration")) ?? nil,
                  let read = registry.descriptor(named: name)?.posts?.mediaCredential else { continue }
            do {
                if let credential = try read(feed.posts), !credential.authorization.revealed.isEmpty { found[feed.name] = credential }
            } catch {
                problems[feed.name] = "\(error)"
            }
        }
        return (found, problems)
    }
}
