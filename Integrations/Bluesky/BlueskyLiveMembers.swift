import Foundation
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
