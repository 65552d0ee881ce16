import Core
import Foundation
import Sync

extension Runtime {
    /// The media archive's coordinator over this runtime's store, or `nil` when the config
    /// has no `"media"` (or no integration keeps an archive).
    ///
    /// Its fetches take slots of their own (`media.concurrency`) and turns per host
    /// (`daemon.maxRequestsPerHost`) at a gate of their own, so they never hold a sync's.
    /// Each archived feed's credentials are read now (``MediaFeedSection``): a secret from the
    /// environment or its file, or the account's stored login session; one that cannot be read
    /// is one log line, and that feed's media go without it.
    ///
    /// - Throws: a ``Core/ServiceError`` `.storage` naming the folder when it cannot be made.
    public func mediaArchiver(log: Logger) async throws -> (archiver: MediaArchiver, fetcher: any MediaFetching)? {
        guard let media, let mediaCapability else { return nil }
        let fetcher: any MediaFetching
        do {
            fetcher = try mediaCapability.makeArchive(media.folder, log)
        } catch {
            throw ServiceError(.storage, "opening the media archive", "\(media.folder.path) cannot be used (\(error)); "
                               + "check \"media.path\" and the folder's permissions")
        }
        var feeds = media.feeds
        for section in mediaFeedSections where feeds[section.feed] != nil {
            do {
                feeds[section.feed]?.credential = try await section.credential(sessions: store, now: Date(), log: log)
            } catch {
                log.warn("media fetched without the feed's credentials", ["feed": Terminal.safe(section.feed, limit: 80),
                                                                          "reason": Terminal.safe("\(error)", limit: 300)])
            }
        }
        let archiver = MediaArchiver(store: store, fetcher: fetcher, gate: HostGate(maxInFlightPerHost: daemon.maxRequestsPerHost),
                                     feeds: feeds, maxBytes: media.maxBytes, concurrency: media.concurrency, log: log)
        return (archiver, fetcher)
    }
}

/// An archived feed's `posts` section, kept as values so the archive reads the feed's
/// credentials when it is made, not at every config load: the integration's
/// ``Core/PostsCapability/mediaCredential`` (a secret from the config's environment or file), or
/// its ``Core/PostsCapability/mediaSession`` (the access token of the session the feed's sync
/// keeps for its account).
struct MediaFeedSection: Sendable {
    var feed: String
    var posts: PostsCapability
    var values: [String: ConfigValue]
    var path: String
    /// Where the config was read: its file, folder and environment.
    var place: ConfigContext

    /// The sections of the archived feeds whose integration names a credential.
    static func all(_ config: Config, registry: IntegrationRegistry) -> [MediaFeedSection] {
        guard let media = config.media else { return [] }
        return config.feeds.compactMap { feed in
            guard media.feeds[feed.name] != nil, let name = (try? feed.posts.string("integration")) ?? nil,
                  let posts = registry.descriptor(named: name)?.posts, posts.mediaCredential != nil || posts.mediaSession != nil else { return nil }
            return MediaFeedSection(feed: feed.name, posts: posts, values: feed.posts.values, path: feed.posts.path, place: config.context)
        }
    }

    /// The feed's credential for its media; `nil` for a feed without one.
    ///
    /// - Throws: a ``Core/ConfigError`` for a secret that cannot be read, or a sentence saying
    ///   the account has no usable session yet.
    func credential(sessions: any SessionKeeper, now: Date, log: Logger) async throws -> MediaCredential? {
        // A context of its own: a missing secret throws here, and its warnings are this reading's.
        let context = ConfigContext(fileName: place.fileName, directory: place.directory, environment: place.environment)
        let section = ConfigSection(values, path: path, context: context)
        defer { for warning in context.warnings.all { log.warn("media credentials", ["warning": Terminal.safe(warning, limit: 300)]) } }
        if let read = posts.mediaCredential, let credential = try read(section), !credential.authorization.revealed.isEmpty {
            return credential
        }
        guard let read = posts.mediaSession, let login = try read(section) else { return nil }
        guard let session = try await sessions.session(of: login.account) else {
            throw MediaSessionMissing("no session is stored for \(login.account) yet; a sync of the feed logs in")
        }
        guard session.isUsable(at: now, margin: 0) else {
            throw MediaSessionMissing("the session of \(login.account) has expired; the feed's next sync renews it")
        }
        return MediaCredential(server: login.server, token: session.accessToken)
    }
}

/// The account a feed's media would carry the login of has no usable session: one sentence.
struct MediaSessionMissing: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
