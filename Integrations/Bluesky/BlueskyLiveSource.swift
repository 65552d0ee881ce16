import Core
import Foundation
import IntegrationKit
import Synchronization

/// Follows a Bluesky timeline live through Jetstream (a WebSocket of the network's commits as JSON).
///
/// Each connection first reads whom the timeline follows (``BlueskySubscription``), then opens
/// Jetstream with `wantedCollections` = posts and reposts and `wantedDids` = that set (at most
/// 10,000 per connection, so several connections past that; more than ``urlDIDs`` go in an
/// `options_update` message rather than the URL). A post's `create` or `update` is hydrated
/// with `getPosts` (up to 25 a call) and mapped as a polled page's item; a repost's `create`
/// hydrates its subject and becomes an entry of its own; deletes delete. Events from other
/// DIDs are ignored.
///
/// No token goes to Jetstream: the session's token goes only to the PDS, for hydration.
/// The last `time_us` handled is kept, and yielded as ``LiveEvent/position(_:)`` for the store
/// to commit with the changes it produced; a reconnect resumes from the stored one rewound by
/// ``rewind``, at most ``maxReplay`` back (``events(resumingFrom:)``). The follow
/// set is read again on every connect and every ``refreshInterval``.
struct BlueskyLiveSource: LiveSource {
    let client: BlueskyClient
    let session: BlueskyLiveSession
    let identifier: String
    let subscription: BlueskySubscription
    let jetstreamURL: URL
    let transport: any WebSocketTransport
    let limits: WebSocketLimits
    let refreshInterval: TimeInterval
    /// Where the last connection got to, shared by its reconnects.
    let position: JetstreamPosition
    /// Which accounts were last seen deactivated, so each change is told once.
    let accounts: BlueskyAccountStates
    /// Identifies the account (a digest of identifier and app password), never shown.
    let accountKey: String
    /// Where the source tells the operator, in one sentence, what they should know (an account deactivated).
    var log: Logger = .disabled

    /// The most DIDs sent in the URL; more go in an `options_update` after connecting.
    static let urlDIDs = 50
    /// How far a reconnect's cursor steps back: duplicates are harmless, gaps are not.
    static let rewind: Int64 = 5_000_000
    /// How far back a connection resumes at most, in microseconds: one hour. A position stored
    /// long ago (a feed whose `stream` was off for days, a daemon stopped overnight) would have
    /// Jetstream replay all it keeps, a `getPosts` call per 25 posts, faster than they are stored.
    /// What the stream missed before then: posts come with the catch-up sync; deletions and
    /// renames do not (a poll never finds a Bluesky deletion).
    static let maxReplay: Int64 = 3_600_000_000
    /// The most URIs one `getPosts` call takes (its lexicon).
    static let hydrationBatch = 25

    var connectionKey: String {
        "bluesky \(jetstreamURL.absoluteString) \(client.service.absoluteString) \(accountKey) \(subscription)"
    }

    var description: String { "bluesky jetstream \(subscription.shown) at \(jetstreamURL.host ?? "?")" }

    private var operation: String { "following \(subscription.shown) on Jetstream at \(jetstreamURL.host ?? "?")" }

    /// What the connection's readers hand the hydrator, in order.
    enum Item: Sendable {
        case connected
        case event(JetstreamEvent)
    }

    /// Resumes from the earliest stored `time_us` (committed with the pages it produced), or
    /// from where this process got to when none is stored; never more than ``maxReplay`` back,
    /// and never from a stored time later than now (it would skip every event until then).
    func events(resumingFrom stored: [String]) -> AsyncThrowingStream<LiveEvent, any Error> {
        events(resumingFrom: stored, now: Date())
    }

    func events(resumingFrom stored: [String], now: Date) -> AsyncThrowingStream<LiveEvent, any Error> {
        let microseconds = Int64(now.timeIntervalSince1970 * 1_000_000)
        position.start(from: stored.compactMap { Int64($0) }.filter { $0 > 0 && $0 <= microseconds }.min(), oldest: microseconds - Self.maxReplay)
        return events()
    }

    func events() -> AsyncThrowingStream<LiveEvent, any Error> {
        AsyncThrowingStream { continuation in
            let open = BlueskyLiveSockets()
            let task = Task {
                do {
                    try await follow(continuation, open)
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                task.cancel()
                // The consumer stops here (SIGTERM, SIGHUP): the sockets say goodbye with a close
                // frame before it goes on, which takes a moment, bounded.
                open.closeAll(waiting: 1)
            }
        }
    }

    /// One connection's life: the follow set, the sockets, and the hydrator, until one of them ends.
    private func follow(_ out: AsyncThrowingStream<LiveEvent, any Error>.Continuation, _ open: BlueskyLiveSockets) async throws {
        let profiles = BlueskyLiveMembers(try await subscription.members(client, session, identifier: identifier))
        let chunks = Self.chunks(profiles.dids)
        guard !chunks.isEmpty else {
            throw ServiceError(.unavailable, operation, "the subscription has no accounts to follow yet")
        }
        let cursor = position.resumeCursor(rewind: Self.rewind)
        let sockets = chunks.map { transport.webSocket(request(for: $0, cursor: cursor), limits: limits) }
        open.add(sockets)
        for (socket, chunk) in zip(sockets, chunks) where chunk.count > Self.urlDIDs { socket.send(Self.optionsUpdate(chunk)) }
        let queue = LiveQueue<Item>(overflow: ServiceError(.contractViolation, operation, "Jetstream sends events faster than they can be "
                                                           + "hydrated (more than \(LiveQueue<Item>.defaultCapacity) waiting)"))
        let opened = BlueskyOpenCount()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for socket in sockets {
                group.addTask {
                    for try await message in socket {
                        switch message {
                        case .opened:
                            if opened.increment() == sockets.count { try queue.push(.connected) }
                        case .text(let text):
                            guard let event = JetstreamEvent(text), profiles.contains(event.did) else { continue }
                            try queue.push(.event(event))
                        case .binary: continue
                        }
                    }
                    throw ServiceError(.unavailable, operation, "Jetstream ended the connection")
                }
            }
            group.addTask {
                var hydrator = Hydrator(source: self, out: out)
                while let items = try await queue.next() {
                    try await hydrator.handle(items, profiles: profiles)
                }
            }
            group.addTask {
                // The follow set again at every interval: followed and unfollowed accounts take effect.
                while true {
                    try await Task.sleep(for: .seconds(refreshInterval))
                    let fresh = try await subscription.members(client, session, identifier: identifier)
                    guard profiles.replace(with: fresh) else { continue }
                    let newChunks = Self.chunks(Array(fresh.keys))
                    guard newChunks.count == sockets.count else {
                        throw ServiceError(.unavailable, operation, "the follow set changed size past one connection's 10,000 accounts; reconnecting")
                    }
                    for (socket, chunk) in zip(sockets, newChunks) { socket.send(Self.optionsUpdate(chunk)) }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// The subscribe request: collections, a cursor when resuming, and the DIDs or `requireHello`.
    /// No `Authorization`: Jetstream is public, and the session's token is for the PDS alone.
    func request(for dids: [String], cursor: Int64?) -> HTTPRequest {
        var components = URLComponents(url: jetstreamURL, resolvingAgainstBaseURL: false)!
        var query = (components.queryItems ?? []).filter { !["wantedCollections", "wantedDids", "cursor", "requireHello", "compress"].contains($0.name) }
        query += BlueskySubscription.collections.map { URLQueryItem(name: "wantedCollections", value: $0) }
        if dids.count <= Self.urlDIDs {
            query += dids.map { URLQueryItem(name: "wantedDids", value: $0) }
        } else {
            query.append(URLQueryItem(name: "requireHello", value: "true"))
        }
        if let cursor { query.append(URLQueryItem(name: "cursor", value: String(cursor))) }
        components.queryItems = query
        return HTTPRequest(url: components.url!, followsRedirects: false)
    }

    /// The DIDs, sorted, in connections of at most 10,000.
    static func chunks(_ dids: [String]) -> [[String]] {
        let sorted = dids.sorted()
        return stride(from: 0, to: sorted.count, by: BlueskySubscription.maxDIDsPerConnection).map {
            Array(sorted[$0..<min($0 + BlueskySubscription.maxDIDsPerConnection, sorted.count)])
        }
    }

    static func optionsUpdate(_ dids: [String]) -> String {
        let payload: [String: Any] = ["type": "options_update",
                                      "payload": ["wantedCollections": BlueskySubscription.collections, "wantedDids": dids]]
        return String(decoding: (try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }
}
