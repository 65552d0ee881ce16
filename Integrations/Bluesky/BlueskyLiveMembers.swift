import Foundation
import IntegrationKit
import Synchronization

/// Whom a live connection follows now, with their profiles: read by the sockets' readers (to
/// drop other DIDs' events), changed by the refresh and by identity events.
final class BlueskyLiveMembers: Sendable {
    private let profiles: Mutex<[String: BlueskyProfile]>

    init(_ profiles: [String: BlueskyProfile]) { self.profiles = Mutex(profiles) }

    func contains(_ did: String) -> Bool { profiles.withLock { $0[did] != nil } }

    func profile(_ did: String) -> BlueskyProfile? { profiles.withLock { $0[did] } }

    var dids: [String] { profiles.withLock { Array($0.keys) } }

    /// Replaces the set; returns whether its DIDs changed.
    func replace(with fresh: [String: BlueskyProfile]) -> Bool {
        profiles.withLock { current in
            defer { current = fresh }
            return Set(current.keys) != Set(fresh.keys)
        }
    }

    func setHandle(_ handle: String, of did: String) { profiles.withLock { $0[did]?.handle = handle } }
}

/// How many of a connection's sockets have opened.
final class BlueskyOpenCount: Sendable {
    private let count = Atomic(0)

    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}

/// The sockets of a live connection, so that ending its stream closes them.
final class BlueskyLiveSockets: Sendable {
    private let sockets = Mutex<[WebSocketStream]>([])

    func add(_ more: [WebSocketStream]) { sockets.withLock { $0 += more } }

    /// Closes every socket with a close frame, waiting at most `timeout` in all.
    func closeAll(waiting timeout: TimeInterval) {
        WebSocketStream.close(sockets.withLock { $0 }, waiting: timeout)
    }
}
