import Core
import Foundation
import IntegrationKit
import Synchronization

/// What the Jetstream connections received and the hydrator has not handled yet, in order.
///
/// The readers push; the hydrator takes everything waiting at once, so events that arrive
/// while a `getPosts` call is out are hydrated together in the next (no added wait for a lone
/// event). Bounded: a stream that runs ``capacity`` events ahead fails, and the reconnect's
/// catch-up fills in.
final class BlueskyLiveQueue: Sendable {
    enum Item: Sendable {
        case connected
        case event(JetstreamEvent)
    }

    private struct State {
        var items: [Item] = []
        var cancelled = false
        var waiter: CheckedContinuation<[Item], any Error>?
    }

    static let capacity = 10_000
    private let state = Mutex(State())

    /// - Throws: ``ServiceError`` `.contractViolation` past ``capacity``.
    func push(_ item: Item, _ operation: String) throws {
        let waiter: CheckedContinuation<[Item], any Error>? = try state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            guard state.items.count < Self.capacity else {
                throw ServiceError(.contractViolation, operation, "Jetstream sends events faster than they can be hydrated "
                                   + "(more than \(Self.capacity) waiting)")
            }
            state.items.append(item)
            return nil
        }
        waiter?.resume(returning: [item])
    }

    /// Everything waiting, once there is something.
    func next() async throws -> [Item] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Item], any Error>) in
                enum Now { case items([Item]), cancelled, wait }
                let now: Now = state.withLock { state in
                    if state.cancelled { return .cancelled }
                    if !state.items.isEmpty {
                        defer { state.items.removeAll(keepingCapacity: true) }
                        return .items(state.items)
                    }
                    state.waiter = continuation
                    return .wait
                }
                switch now {
                case .items(let items): continuation.resume(returning: items)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

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

    /// Closes every socket with a close frame, waiting for each at most `timeout`.
    func closeAll(waiting timeout: TimeInterval) {
        for socket in sockets.withLock({ $0 }) { socket.close(waiting: timeout) }
    }
}
